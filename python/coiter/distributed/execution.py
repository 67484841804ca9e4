"""``coiter.distributed.evaluate``: one statement, run block by block as Dask tasks.

The statement is compiled into **one kernel per signature**, the same as a single process
compiles (the expression over the blocks' formats and dtypes): every task calls
``ct.evaluate`` on its blocks, whose remembered kernels and compiler cache make the first task
of each worker process compile it (or load it from the disk cache, ``COITER_CACHE_DIR``, which
workers on one machine or on a shared file system share) and every later task reuse it. The
client compiles it first too, on empty blocks: that checks the statement, the formats and the
schedule before any task is sent (errors are raised here, with their types), gives the
result's format and dtype, and fills the disk cache the workers then read.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from distributed import Client, Future
from numpy.typing import DTypeLike

from ..conversion import as_tensor
from ..errors import ScheduleError, ShapeError
from ..formats import (
    Format,
    FormatLike,
    FormatState,
    format_from_state,
    format_state,
    is_all_dense,
)
from ..notation import accesses, check_extents
from ..parser import parse
from ..schedule import Schedule
from ..tensor import Tensor
from .blocks import block_shape, cut_blocks
from .bounds import balanced_bounds, check_parts, uniform_bounds
from .cluster import (
    check_fits,
    place,
    resolve_client,
    round_robin,
    scheduler_address,
    tensor_nbytes,
    worker_addresses,
)
from .distribution import Distribution, split_schedule
from .linearity import partial_combiner
from .partition import partition_future
from .partitioned import PartitionedTensor
from .reduction import combine, combine_tree

# -- the task each block runs (on a worker) ------------------------------------------------


def run_block(
    statement: str,
    out_format_state: FormatState,
    dtype: DTypeLike,
    schedule: str | None,
    names: Sequence[str],
    *tensors: Tensor,
) -> Tensor:
    """The statement computed on one block's operands (a Dask task)."""
    from ..evaluate import evaluate

    out_format = format_from_state(out_format_state)
    operands: dict[str, Any] = dict(zip(names, tensors))  # (ct.evaluate's **tensors: Any)
    return evaluate(
        statement,
        out_format=out_format,
        dtype=dtype,
        schedule=schedule,
        **operands,
    )


def run_block_into(
    previous: Tensor | None,
    op: str,
    statement: str,
    out_format_state: FormatState,
    dtype: DTypeLike,
    schedule: str | None,
    names: Sequence[str],
    *tensors: Tensor,
) -> Tensor:
    """A block's partial result combined with the blocks' before it (serial reduction)."""
    partial = run_block(statement, out_format_state, dtype, schedule, names, *tensors)
    return partial if previous is None else combine(previous, partial, op, out_format_state)


# -- the plan --------------------------------------------------------------------------------


@dataclass
class _Operand:
    name: str
    value: Tensor | PartitionedTensor
    indices: tuple[str, ...]  # the index variables it is accessed with

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)


def _operand(name: str, value: Any, client: Client) -> Tensor | PartitionedTensor:
    """A PartitionedTensor, or a local coiter tensor (dask arrays are partitioned first)."""
    if isinstance(value, PartitionedTensor):
        there = scheduler_address(value.client)
        if value.client is not client and there != scheduler_address(client):
            raise ValueError(f"operand {name} is held on another Dask cluster ({there})")
        return value
    if type(value).__module__.startswith("dask.array"):
        from .dask_arrays import from_dask_array

        return from_dask_array(value, client=client, name=name)
    return as_tensor(value, name)


def _split_var(
    distribution: Distribution | None,
    operands: list[_Operand],
    rhs_vars: list[str],
    lhs_vars: list[str],
) -> str:
    """The distributed index: the schedule's, else the one the partitioned operands are cut
    along."""
    if distribution is not None:
        if distribution.var not in rhs_vars:
            raise ScheduleError(
                f"distribute({distribution.var}): {distribution.var} is not an index of the "
                f"statement (its indices are {', '.join(rhs_vars)})"
            )
        return distribution.var
    cut: dict[str, list[str]] = {}
    # Operands cut into several blocks decide; a one-block partition only when none is.
    for several in (True, False):
        for op in operands:
            value = op.value
            if (
                isinstance(value, PartitionedTensor)
                and value.mode is not None
                and (value.parts > 1) == several
            ):
                cut.setdefault(op.indices[value.mode], []).append(op.name)
        if cut:
            break
    if not cut:
        raise ScheduleError(
            "nothing says how to distribute the statement: partition an operand "
            "(coiter.distributed.partition) or pass schedule=ct.Schedule().distribute(i, parts)"
        )
    if len(cut) > 1:
        described = "; ".join(f"{', '.join(names)} along {var}" for var, names in cut.items())
        raise ScheduleError(
            f"the operands are partitioned along different indices ({described}): partition "
            "them along one index, or name it with distribute(i)"
        )
    return next(iter(cut))


def _bounds(
    var: str,
    distribution: Distribution | None,
    operands: list[_Operand],
    extent: int,
    client: Client,
    workers: Sequence[str] | None,
) -> tuple[int, ...]:
    """The block bounds of ``var``: those of the operands partitioned along it (which must
    agree), else ``parts`` blocks balanced on the largest local sparse operand indexed by it."""
    fixed = [(op, cut) for op in operands if (cut := _cut_along(op, var)) is not None]
    if fixed:
        first, (first_value, first_bounds) = fixed[0]
        for op, (_, bounds) in fixed[1:]:
            if bounds != first_bounds:
                raise ShapeError(
                    f"{first.name} and {op.name} are partitioned differently along {var} "
                    f"({first.name}: blocks at {list(first_bounds)}, {op.name}: at "
                    f"{list(bounds)}); partition one like the other: "
                    f"coiter.distributed.partition(..., bounds={first.name}.bounds)"
                )
        parts = first_value.parts
        if (
            distribution is not None
            and distribution.parts is not None
            and distribution.parts != parts
        ):
            raise ShapeError(
                f"distribute({var},{distribution.parts}) asks for {distribution.parts} blocks, but "
                f"{first.name} is partitioned into {parts} blocks along {var}"
            )
        return first_bounds
    what = f"index {var}"
    if distribution is not None and distribution.parts is not None:
        parts = check_parts(distribution.parts, extent, what)
    elif any(
        isinstance(op.value, PartitionedTensor)
        and op.value.mode is not None
        and op.indices[op.value.mode] == var
        for op in operands
    ):
        parts = 1  # the operands' own partition: one block
    else:
        parts = max(1, min(len(worker_addresses(client, workers)), extent))
    balance = distribution.balance if distribution is not None else "nnz"
    # Balance by the largest local sparse operand cut along var (the one whose work dominates).
    local = [
        (op, op.value)
        for op in operands
        if isinstance(op.value, Tensor) and var in op.indices and not is_all_dense(op.value.format)
    ]
    if local and balance != "coords":
        heaviest, tensor = max(local, key=lambda pair: pair[1].nnz)
        return balanced_bounds(tensor, heaviest.indices.index(var), parts, balance)
    return uniform_bounds(extent, parts)


def _cut_along(op: _Operand, var: str) -> tuple[PartitionedTensor, tuple[int, ...]] | None:
    """The operand and its bounds when it is a PartitionedTensor cut (into more than one block)
    along ``var``, else None."""
    value = op.value
    if (
        isinstance(value, PartitionedTensor)
        and value.mode is not None
        and value.bounds is not None  # (always, with a mode)
        and value.parts > 1
        and op.indices[value.mode] == var
    ):
        return value, value.bounds
    return None


# The result format and dtype ct.evaluate chooses, per statement and operand kinds (the client's
# check of the statement runs once per signature, like the compiler's).
_CHOSEN: OrderedDict[tuple[Any, ...], tuple[Format, np.dtype[Any]]] = OrderedDict()
_CHOSEN_KEPT = 256


def _template(op: _Operand, var: str, bounds: Sequence[int]) -> Tensor:
    """A tensor with the operand's format and dtype and one block's shape, for the client's
    compilation (local tensors themselves when they are replicated)."""
    value = op.value
    if isinstance(value, Tensor) and var not in op.indices:
        return value
    shape = op.shape
    if var in op.indices:
        mode = op.indices.index(var)
        shape = block_shape(shape, mode, bounds[0], bounds[1])
    from ..creation import zeros

    return zeros(shape, format=value.format, dtype=value.dtype, name=op.name)


def _result_kind(
    statement: str,
    operands: list[_Operand],
    var: str,
    bounds: Sequence[int],
    out_format: FormatLike | None,
    dtype: DTypeLike | None,
    schedule: str | None,
) -> tuple[Format, np.dtype[Any]]:
    key = (
        statement,
        tuple((op.name, op.value.format, op.value.dtype, len(op.shape)) for op in operands),
        out_format
        if out_format is None or isinstance(out_format, (str, Format))
        else str(out_format),
        None if dtype is None else np.dtype(dtype),
        schedule,
    )
    chosen = _CHOSEN.get(key)
    if chosen is None:
        from ..evaluate import evaluate

        # (ct.evaluate's **tensors: Any)
        templates: dict[str, Any] = {op.name: _template(op, var, bounds) for op in operands}
        result = evaluate(
            statement, out_format=out_format, dtype=dtype, schedule=schedule, **templates
        )
        chosen = (result.format, result.dtype)
        _CHOSEN[key] = chosen
        if len(_CHOSEN) > _CHOSEN_KEPT:
            _CHOSEN.popitem(last=False)
    else:
        _CHOSEN.move_to_end(key)
    return chosen


def evaluate(
    statement: str,
    *,
    schedule: Schedule | str | None = None,
    out_format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    client: Client | None = None,
    workers: Sequence[str] | None = None,
    gather: bool = False,
    resilient: bool = True,
    **operands: Any,
) -> PartitionedTensor | Tensor:
    """Compute ``statement`` on a Dask cluster, block by block.

    Parameters
    ----------
    statement : str
        Index notation, as for ``ct.evaluate`` (``"y(i) = A(i,j) * x(j)"``).
    schedule : ct.Schedule or str, optional
        May hold ``distribute(i, parts, reduce, balance)`` (see ``ct.Schedule.distribute``);
        its other commands schedule the kernel each block runs. Without ``distribute``, the
        index along which the partitioned operands are cut is distributed, into their blocks.
    out_format, dtype
        As for ``ct.evaluate`` (inferred by default, from the operands' formats).
    client : distributed.Client, optional
        By default the current client.
    workers : list of str, optional
        Worker addresses the blocks and tasks are restricted to (by default all).
    gather : bool
        Return the result gathered into a local ``ct.Tensor`` instead of a PartitionedTensor.
    resilient : bool
        How local operands are placed on the workers (see ``partition``).
    **operands
        The statement's tensors by name: PartitionedTensors, ``dask.array`` arrays (partitioned
        along their chunks), or anything ``ct.asarray`` takes (cut on the fly when indexed by the
        distributed index, else replicated: held once and copied to the workers that need it).

    Returns
    -------
    PartitionedTensor
        Partitioned like the operands along the distributed index when it is a free index of the
        result; held whole (``mode=None``) when it is summed (the partial results combined).
        A ``ct.Tensor`` with ``gather=True``.

    Raises
    ------
    ScheduleError
        No distributed index can be told, operands are partitioned along different indices or
        along an index that is not distributed, or a summed index cannot be split (a term
        without it, ``a(i) = d(i) + B(i,j) c(j)``, would be added once per block).
    ShapeError
        Operands partitioned differently along the distributed index, extents that disagree, or
        a block that would not fit in a worker's memory limit.
    """
    client = resolve_client(client)
    if not isinstance(statement, str):
        raise TypeError(
            "coiter.distributed.evaluate takes the statement as text, not "
            f"{type(statement).__name__}"
        )
    distribution, local_schedule = split_schedule(schedule)
    assignment, refs = parse(statement)
    result_name = assignment.lhs.tensor.name
    names = [name for name in refs if name != result_name]
    missing = [name for name in names if name not in operands]
    if missing:
        raise TypeError(f"coiter.distributed.evaluate: no tensor given for {missing}")
    unknown = sorted(set(operands) - set(names))
    if unknown:
        raise TypeError(f"coiter.distributed.evaluate: {unknown} are not tensors of {statement!r}")
    access_of = {a.tensor.name: tuple(v.name for v in a.indices) for a in accesses(assignment.rhs)}
    ops = [
        _Operand(name, _operand(name, operands[name], client), access_of[name]) for name in names
    ]
    for op in ops:
        if len(op.shape) != len(op.indices):
            raise ShapeError(
                f"tensor {op.name} has {len(op.shape)} modes but is indexed with "
                f"{len(op.indices)} indices in {statement!r}"
            )
    shapes = {op.name: op.shape for op in ops}
    check_extents(accesses(assignment.rhs), lambda ref: shapes.get(ref.name))
    rhs_vars = list(dict.fromkeys(v for op in ops for v in op.indices))
    lhs_vars = [v.name for v in assignment.lhs.indices]
    var = _split_var(distribution, ops, rhs_vars, lhs_vars)
    for op in ops:
        if op.indices.count(var) > 1:
            raise ScheduleError(
                f"{op.name}({','.join(op.indices)}) is indexed twice by the distributed index "
                f"{var}: its blocks would be diagonal blocks, which are not supported"
            )
        value = op.value
        if (
            isinstance(value, PartitionedTensor)
            and value.mode is not None
            and value.parts > 1
            and op.indices[value.mode] != var
        ):
            raise ScheduleError(
                f"{op.name} is partitioned along mode {value.mode} (index "
                f"{op.indices[value.mode]}), but the statement is distributed along {var}: "
                f"partition it along {var}, or gather it ({op.name}.compute()) to replicate it"
            )
    extent = next(op.shape[op.indices.index(var)] for op in ops if var in op.indices)
    bounds = _bounds(var, distribution, ops, extent, client, workers)
    out_fmt, out_dtype = _result_kind(
        statement, ops, var, bounds, out_format, dtype, local_schedule
    )
    summed = var not in lhs_vars
    op_name = partial_combiner(assignment.rhs, lhs_vars, var) if summed else None
    result_shape = _result_shape(lhs_vars, ops)
    _check_result_size(
        client,
        result_shape,
        lhs_vars,
        var,
        bounds,
        out_fmt,
        out_dtype,
        out_format,
        result_name,
        workers,
    )
    inputs, placement = _place_inputs(client, ops, var, bounds, resilient, workers)
    parts = len(bounds) - 1
    state = format_state(out_fmt)
    targets: list[str | None] = list(placement) if placement is not None else [None] * parts

    def where(b: int) -> dict[str, Any]:
        if workers is not None:
            return {"workers": list(workers), "allow_other_workers": False}
        if targets[b] is not None:
            return {"workers": [targets[b]], "allow_other_workers": True}
        return {}

    def run_block_on_cluster(b: int) -> Future[Tensor]:
        """Block b's kernel as a task, on the worker its operands name."""
        return client.submit(
            run_block,
            statement,
            state,
            out_dtype,
            local_schedule,
            names,
            *[inputs[op.name][b] for op in ops],
            **where(b),
            pure=False,
        )

    if not summed:
        futures = [run_block_on_cluster(b) for b in range(parts)]
        result = PartitionedTensor(
            futures,
            lhs_vars.index(var),
            bounds,
            result_shape,
            out_dtype,
            out_fmt,
            client,
            result_name,
            placement,
        )
    else:
        assert op_name is not None  # a summed index: partial_combiner said how partials combine
        reduce = distribution.reduce if distribution is not None else "tree"
        total: Future[Tensor] | None = None
        if reduce == "serial":
            for b in range(parts):
                total = client.submit(
                    run_block_into,
                    total,
                    op_name,
                    statement,
                    state,
                    out_dtype,
                    local_schedule,
                    names,
                    *[inputs[op.name][b] for op in ops],
                    **where(b),
                    pure=False,
                )
        else:
            partials = [run_block_on_cluster(b) for b in range(parts)]
            total = combine_tree(client, partials, op_name, out_fmt)
        assert total is not None  # parts >= 1: the loop ran, or combine_tree gave the sum
        result = PartitionedTensor(
            [total], None, None, result_shape, out_dtype, out_fmt, client, result_name
        )
    return result.compute() if gather else result


def _result_shape(lhs_vars: list[str], ops: list[_Operand]) -> tuple[int, ...]:
    shape = []
    for v in lhs_vars:
        source = next((op for op in ops if v in op.indices), None)
        if source is None:
            raise ShapeError(f"no operand gives the extent of the result's index {v}")
        shape.append(source.shape[source.indices.index(v)])
    return tuple(shape)


def _check_result_size(
    client: Client,
    shape: tuple[int, ...],
    lhs_vars: list[str],
    var: str,
    bounds: Sequence[int],
    fmt: Format,
    dtype: DTypeLike,
    out_format: FormatLike | None,
    name: str,
    workers: Sequence[str] | None,
) -> None:
    """A dense result block (or partial) within ct.config.max_dense_bytes when its format was
    inferred (docs/reference.md, "Result formats", rule 3, per process), and within the workers'
    memory."""
    if not is_all_dense(fmt):
        return
    if var in lhs_vars:
        mode = lhs_vars.index(var)
        widest = max(hi - lo for lo, hi in zip(bounds[:-1], bounds[1:]))
        shape = tuple(widest if m == mode else e for m, e in enumerate(shape))
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if out_format is None:
        from ..config import config

        if nbytes > config.max_dense_bytes:
            raise ShapeError(
                f"a dense block of the result {name} of shape {shape} would need {nbytes} bytes, "
                f"more than ct.config.max_dense_bytes ({config.max_dense_bytes}); pass out_format= "
                "(a sparse format, or 'dense' to insist)"
            )
    check_fits(client, nbytes, f"a dense block of the result {name} (shape {shape})", workers)


def _place_inputs(
    client: Client,
    ops: list[_Operand],
    var: str,
    bounds: Sequence[int],
    resilient: bool,
    workers: Sequence[str] | None,
) -> tuple[dict[str, list[Future[Tensor]]], list[str] | None]:
    """Per operand, one future per block: its own blocks (partitioned along var), the blocks cut
    from it (local, or held whole and indexed by var), or one future repeated (replicated).
    Also the worker of each block of the first operand cut along var (owner computes), when
    known."""
    parts = len(bounds) - 1
    inputs: dict[str, list[Future[Tensor]]] = {}
    placement: list[str] | None = None
    # Operands already partitioned first: their blocks' workers are where the others' go.
    for op in sorted(ops, key=lambda op: _cut_along(op, var) is None):
        value = op.value
        own = _cut_along(op, var)
        if own is not None:
            inputs[op.name] = own[0].blocks
            placement = placement or own[0].placement
        elif isinstance(value, PartitionedTensor) and var in op.indices and parts > 1:
            cut = partition_future(
                client,
                _whole(value),
                value.shape,
                value.dtype,
                value.format,
                op.indices.index(var),
                None,
                "coords",
                bounds,
                workers,
                op.name,
            )
            inputs[op.name] = cut.blocks
            placement = placement or cut.placement
        elif isinstance(value, PartitionedTensor):
            inputs[op.name] = [_whole(value)] * parts
        elif var in op.indices:
            blocks = cut_blocks(value, op.indices.index(var), bounds)
            for b, block in enumerate(blocks):
                check_fits(client, tensor_nbytes(block), f"block {b} of {op.name}", workers)
            targets = placement or round_robin(client, parts, workers)
            inputs[op.name] = place(client, blocks, op.name, resilient, workers, targets)
            placement = targets
        else:
            check_fits(client, tensor_nbytes(value), f"the replicated operand {op.name}", workers)
            inputs[op.name] = place(client, [value], op.name, resilient, workers) * parts
    return inputs, placement


def _whole(value: PartitionedTensor) -> Future[Tensor]:
    """The one future holding a tensor held whole (a one-block partition is one too)."""
    if value.parts != 1:
        raise ValueError(f"{value!r} is not held in one block")
    return value.blocks[0]
