"""The Dask side: which client, which workers, whether data fits a worker, and placing data.

Data is placed on workers in one of two ways:

- **resilient** (the default): each block is the result of a task whose argument *is* the
  block, so the scheduler keeps the block's bytes as the task's definition. When a worker
  dies, Dask recomputes its blocks elsewhere from that definition, and the computation goes
  on (Dask's lineage). Costs the block's bytes on the scheduler.
- **scattered** (``resilient=False``): ``client.scatter`` sends each block to its worker and
  nothing else keeps it: less memory and one transfer fewer, but a block is lost with its
  worker, and a computation that needs it fails (Dask says the future was lost).

Tensors read from files or built from ``dask.array`` collections are task results by nature:
their lineage is the file or the collection's graph.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, TypeVar

import dask
import numpy as np
from distributed import Client, Future, default_client
from distributed.core import PooledRPCCall, rpc

from ..errors import ShapeError
from ..tensor import Tensor

T = TypeVar("T")


def resolve_client(client: Client | None) -> Client:
    """``client``, else the default Dask client (the last one created in this process)."""
    if client is not None:
        if not isinstance(client, Client):
            raise TypeError(
                f"client must be a dask.distributed.Client, not {type(client).__name__}"
            )
        return client
    try:
        found: Client = default_client()  # (distributed does not annotate it)
    except ValueError:
        raise ValueError(
            "coiter.distributed needs a Dask cluster: start one with "
            "dask.distributed.Client(...) (a LocalCluster without an address), or pass "
            "client="
        ) from None
    return found


def _scheduler(client: Client) -> rpc | PooledRPCCall:
    """The client's connection to its scheduler (None only until the client starts: a client
    in use has one)."""
    scheduler = client.scheduler
    assert scheduler is not None, "the Dask client has not been started"
    return scheduler


def scheduler_address(client: Client) -> str:
    """The address of the client's scheduler."""
    address = _scheduler(client).address
    # (distributed's rpc declares address None at class level; its constructor sets the str)
    assert isinstance(address, str)
    return address


def _workers_info(client: Client) -> dict[str, dict[str, Any]]:
    """Address -> information of every worker, asked of the scheduler. (Not through
    ``client.scheduler_info()``: the client's periodic refresh, which asks for no workers, may
    replace the answer it returns between its request and its return.)"""
    identity: dict[str, Any] = client.sync(_scheduler(client).identity, n_workers=-1)
    workers: dict[str, dict[str, Any]] = identity["workers"]
    return workers


def worker_addresses(client: Client, workers: Sequence[str] | None = None) -> list[str]:
    """The addresses of the workers to use: ``workers`` (checked), else all, in a fixed order."""
    known = sorted(_workers_info(client))
    if not known:
        raise RuntimeError(
            "the Dask cluster has no workers (yet): wait with client.wait_for_workers(n)"
        )
    if workers is None:
        return known
    chosen = [workers] if isinstance(workers, str) else list(workers)
    unknown = [w for w in chosen if w not in known]
    if unknown or not chosen:
        raise ValueError(
            f"workers {unknown or chosen} are not workers of the cluster (it has {known})"
        )
    return chosen


def memory_fraction() -> float:
    """The fraction of a worker's memory limit one block may take: Dask's first memory
    threshold that is set (``distributed.worker.memory.target``, then spill, pause, terminate):
    above it a worker starts spilling, pausing or restarting, and a kernel needs its operands
    in memory."""
    for key in ("target", "spill", "pause", "terminate"):
        value = dask.config.get(f"distributed.worker.memory.{key}", default=False)
        if value is not False and value is not None and 0 < float(value) <= 1:
            return float(value)
    return 1.0


# Worker memory limits per scheduler, with when they were asked: asking is a round trip to the
# scheduler (milliseconds, as much as a small kernel's whole task), and limits rarely change.
_LIMITS_KEPT_SECONDS = 2.0
_limits: dict[str, tuple[float, dict[str, int]]] = {}


def memory_limits(client: Client) -> dict[str, int]:
    """Each worker's ``memory_limit`` in bytes (0: none), asked at most every 2 seconds."""
    address = scheduler_address(client)
    asked = _limits.get(address)
    now = time.monotonic()
    if asked is None or now - asked[0] > _LIMITS_KEPT_SECONDS:
        asked = (
            now,
            {w: int(info.get("memory_limit") or 0) for w, info in _workers_info(client).items()},
        )
        _limits[address] = asked
    return asked[1]


def check_fits(
    client: Client, nbytes: int, what: str, workers: Sequence[str] | None = None
) -> None:
    """ShapeError when ``nbytes`` exceed what the smallest worker may hold (memory_fraction of
    its ``memory_limit``; workers without a limit take anything): said before sending, instead
    of a worker that dies of it, is retried and dies again."""
    limits = [
        limit
        for address, limit in memory_limits(client).items()
        if workers is None or address in workers
    ]
    limits = [limit for limit in limits if limit > 0]
    if not limits:
        return
    fraction = memory_fraction()
    usable = min(limits) * fraction
    if nbytes > usable:
        raise ShapeError(
            f"{what} needs {_mib(nbytes)}, more than {fraction:.0%} of the smallest worker's "
            f"memory limit ({_mib(min(limits))}; Dask's distributed.worker.memory thresholds): "
            "cut it into more parts, or give the workers more memory"
        )


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MiB"


def tensor_nbytes(tensor: Tensor) -> int:
    """Bytes of a tensor's arrays (values and every level's index arrays)."""
    storage = tensor._storage
    total = storage.values.nbytes
    for arrays in storage.level_arrays:
        total += sum(array.nbytes for array in arrays.values())
    return int(total)


def _hold(value: Any) -> Any:
    """The task that holds a placed value: its definition is the value itself (lineage)."""
    return value


def round_robin(client: Client, count: int, workers: Sequence[str] | None = None) -> list[str]:
    """The worker of each of ``count`` blocks: block ``b`` on worker ``b mod W`` (SuperTaco's
    mapping of blocks to nodes, Shinde's SuperTaco thesis, §3.5)."""
    targets = worker_addresses(client, workers)
    return [targets[b % len(targets)] for b in range(count)]


def place(
    client: Client,
    values: Sequence[T],
    what: str,
    resilient: bool = True,
    workers: Sequence[str] | None = None,
    targets: Sequence[str] | None = None,
) -> list[Future[T]]:
    """Futures of ``values`` (blocks, or one replicated operand), value ``b`` on ``targets[b]``
    (by default :func:`round_robin`). Unless ``workers`` restricts them, Dask may later move a
    block (to another worker when its own is gone)."""
    targets = list(targets) if targets is not None else round_robin(client, len(values), workers)
    restricted = workers is not None
    tag = uuid.uuid4().hex[:12]
    futures: list[Future[T]] = []
    for b, value in enumerate(values):
        target = [targets[b]]
        if not resilient:
            futures.append(client.scatter(value, workers=target, hash=False))
            continue
        nbytes = (
            tensor_nbytes(value) if isinstance(value, Tensor) else int(getattr(value, "nbytes", 0))
        )
        # The block travels inside its task on purpose (that is its lineage): Dask's warning
        # about large graphs advises against exactly this, so it is raised above this block.
        threshold = max(
            nbytes * 2 + (1 << 20),
            int(
                dask.utils.parse_bytes(
                    dask.config.get("distributed.admin.large-graph-warning-threshold", "10MB")
                )
            ),
        )
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": threshold}):
            futures.append(
                client.submit(
                    _hold,
                    value,
                    key=f"coiter-{what}-{b}-{tag}",
                    workers=target,
                    allow_other_workers=not restricted,
                    pure=False,
                )
            )
    return futures


def array_nbytes(value: Any) -> int:
    """Bytes of a NumPy array, SciPy sparse matrix or coiter tensor (0 when unknown)."""
    if isinstance(value, Tensor):
        return tensor_nbytes(value)
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    data = getattr(value, "data", None)
    if isinstance(data, np.ndarray):  # SciPy sparse: data, indices, indptr
        return int(
            sum(
                getattr(value, name).nbytes
                for name in ("data", "indices", "indptr")
                if hasattr(value, name)
            )
        )
    return int(getattr(value, "nbytes", 0) or 0)
