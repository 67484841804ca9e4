"""``coiter.distributed.partition``: cut a tensor along one mode into blocks on the workers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from distributed import Client, Future
from numpy.typing import DTypeLike

from ..conversion import as_tensor
from ..errors import ShapeError
from ..formats import Format, FormatLike
from ..tensor import Tensor
from .blocks import cut_block, cut_blocks
from .bounds import balanced_bounds, check_balance, check_bounds, check_parts
from .cluster import (
    _hold,
    check_fits,
    place,
    resolve_client,
    round_robin,
    tensor_nbytes,
    worker_addresses,
)
from .partitioned import PartitionedTensor


def partition(
    tensor: Any,
    mode: int = 0,
    parts: int | None = None,
    balance: str = "nnz",
    bounds: Sequence[int] | None = None,
    *,
    format: FormatLike | None = None,
    client: Client | None = None,
    workers: Sequence[str] | None = None,
    resilient: bool = True,
    name: str | None = None,
) -> PartitionedTensor:
    """Cut ``tensor`` along ``mode`` into contiguous blocks held on the Dask workers.

    Parameters
    ----------
    tensor : coiter.Tensor, NumPy array, SciPy sparse matrix, pydata/sparse array, or a
        PartitionedTensor (cut again: a whole one on its worker, a partitioned one after
        gathering it)
    mode : int
        The mode to cut.
    parts : int, optional
        The number of blocks; by default one per worker (at most the mode's extent).
    balance : {"nnz", "bytes", "coords"}
        Where the cuts go: equal stored entries per block (the default), equal bytes of
        values and index arrays per block (SuperTaco's byte-based split), or equal coordinate
        ranges. Ignored when ``bounds`` is given.
    bounds : sequence of int, optional
        Explicit cuts: ``parts + 1`` strictly increasing coordinates from 0 to the extent
        (``other.bounds`` partitions a tensor conformally with ``other``).
    format : optional
        Convert to this format first (``ct.asarray``'s ``format``).
    client : distributed.Client, optional
        By default the current client.
    workers : list of str, optional
        The worker addresses to place blocks on (block ``b`` on ``workers[b % len(workers)]``);
        by default all workers, and a block may later move (Dask's choice).
    resilient : bool
        True (the default): a block lost with its worker is rebuilt by Dask from a copy the
        scheduler keeps. False: blocks are scattered (no copy on the scheduler; a lost block
        fails the computations that need it).
    name : str, optional
        The tensor's name (by default the input's).

    Returns
    -------
    PartitionedTensor

    Raises
    ------
    ShapeError
        ``mode`` is not a mode of the tensor, ``parts`` exceeds its extent, ``bounds`` do not
        cover it, or a block would not fit in a worker's memory limit.
    """
    client = resolve_client(client)
    if isinstance(tensor, PartitionedTensor):
        if tensor.mode is not None:
            tensor = tensor.compute()
        else:
            return partition_future(
                client,
                tensor.blocks[0],
                tensor.shape,
                tensor.dtype,
                tensor.format,
                mode,
                parts,
                balance,
                bounds,
                workers=workers,
                name=name or tensor.name,
            )
    tensor = as_tensor(tensor, name) if format is None else _converted(tensor, format, name)
    name = name or tensor.name
    mode = _checked_mode(mode, tensor.ndim)
    extent = tensor.shape[mode]
    what = f"mode {mode} of {_label(name)}"
    if bounds is not None:
        bounds = check_bounds(bounds, extent, what)
    else:
        check_balance(balance)
        parts = _default_parts(client, parts, extent, workers, what)
        bounds = balanced_bounds(tensor, mode, parts, balance)
    blocks = cut_blocks(tensor, mode, bounds)
    for b, block in enumerate(blocks):
        check_fits(client, tensor_nbytes(block), f"block {b} of {_label(name)}", workers)
    targets = round_robin(client, len(blocks), workers)
    futures = place(client, blocks, name or "tensor", resilient, workers, targets)
    return PartitionedTensor(
        futures, mode, bounds, tensor.shape, tensor.dtype, tensor.format, client, name, targets
    )


def partition_future(
    client: Client,
    whole: Future[Tensor],
    shape: Sequence[int],
    dtype: DTypeLike,
    fmt: Format,
    mode: int,
    parts: int | None,
    balance: str,
    bounds: Sequence[int] | None,
    workers: Sequence[str] | None = None,
    name: str | None = None,
) -> PartitionedTensor:
    """Cut a tensor held whole on a worker: the cuts are computed and made where it is, then
    each block moves to its worker (its lineage: the whole tensor's task)."""
    mode = _checked_mode(mode, len(shape))
    extent = shape[mode]
    what = f"mode {mode} of {_label(name)}"
    if bounds is not None:
        bounds = check_bounds(bounds, extent, what)
    else:
        check_balance(balance)
        parts = _default_parts(client, parts, extent, workers, what)
        bounds = client.submit(balanced_bounds, whole, mode, parts, balance, pure=False).result()
    targets = round_robin(client, len(bounds) - 1, workers)
    futures: list[Future[Tensor]] = []
    for b, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        cut = client.submit(cut_block, whole, mode, lo, hi, pure=False)
        futures.append(
            client.submit(
                _hold, cut, workers=[targets[b]], allow_other_workers=workers is None, pure=False
            )
        )
    return PartitionedTensor(futures, mode, bounds, shape, dtype, fmt, client, name, targets)


def _converted(value: Any, format: FormatLike, name: str | None) -> Tensor:
    from ..conversion import asarray

    return asarray(value, format=format, name=name)


def _checked_mode(mode: int, ndim: int) -> int:
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(f"mode must be an integer, not {type(mode).__name__}")
    if not -ndim <= mode < ndim:
        raise ShapeError(f"mode {mode} is not a mode of a tensor of order {ndim}")
    return mode % ndim


def _default_parts(
    client: Client, parts: int | None, extent: int, workers: Sequence[str] | None, what: str
) -> int:
    if parts is None:
        return max(1, min(len(worker_addresses(client, workers)), extent))
    return check_parts(parts, extent, what)


def _label(name: str | None) -> str:
    return f"tensor {name!r}" if name else "the tensor"


def put(
    tensor: Any,
    *,
    client: Client | None = None,
    workers: Sequence[str] | None = None,
    resilient: bool = True,
    name: str | None = None,
) -> PartitionedTensor:
    """Hold ``tensor`` whole on one worker (a PartitionedTensor with ``mode=None``).

    As an operand of :func:`~coiter.distributed.evaluate` it is replicated: each worker that
    runs a block fetches it once and keeps it, so a vector used by many products (the ``x``
    of repeated SpMVs) is sent to the cluster once instead of with every call."""
    client = resolve_client(client)
    tensor = as_tensor(tensor, name)
    name = name or tensor.name
    check_fits(client, tensor_nbytes(tensor), _label(name), workers)
    futures = place(client, [tensor], name or "tensor", resilient, workers)
    return PartitionedTensor(
        futures, None, None, tensor.shape, tensor.dtype, tensor.format, client, name
    )
