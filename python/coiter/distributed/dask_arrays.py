"""Partitioned tensors from and to ``dask.array`` collections.

A Dask array chunked along one axis is a partitioned tensor: each chunk (a NumPy array, a
SciPy sparse matrix, a pydata/sparse array or a coiter tensor) becomes a block, converted by a
task on the worker that computes the chunk, so the blocks' lineage is the array's own graph
(Dask recomputes a lost block from it). The other way, each block becomes one chunk.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

import numpy as np
from dask.delayed import delayed
from distributed import Client

from ..errors import FormatError, ShapeError
from ..formats import Format, FormatLike, FormatState, as_format, format_from_state, format_state
from ..tensor import Tensor
from .cluster import check_fits, resolve_client
from .partitioned import PartitionedTensor

if TYPE_CHECKING:
    import dask.array

logger = logging.getLogger("coiter")

KINDS = ("coiter", "numpy", "scipy", "sparse")


def _chunk_to_tensor(
    chunk: Any, fmt_state: FormatState, dtype: np.dtype[Any], name: str | None
) -> Tensor:
    """One chunk as a coiter tensor of the array's format and dtype (a task)."""
    from ..conversion import asarray

    return asarray(chunk, format=format_from_state(fmt_state), dtype=dtype, name=name)


def _chunk_format(meta: Any, ndim: int) -> Format:
    """The format coiter gives the array's chunk type: NumPy dense, SciPy and pydata/sparse
    their own (CSR, COO, ...)."""
    from ..conversion import asarray

    try:
        return asarray(meta).format
    except (TypeError, ValueError) as error:
        raise FormatError(
            f"cannot tell a coiter format for dask chunks of type {type(meta).__name__} "
            f"({error}); pass format="
        ) from error


def from_dask_array(
    array: dask.array.Array,
    mode: int | None = None,
    format: FormatLike | None = None,
    *,
    client: Client | None = None,
    name: str | None = None,
) -> PartitionedTensor:
    """A PartitionedTensor whose blocks are the chunks of the ``dask.array`` ``array``.

    Parameters
    ----------
    array : dask.array.Array
        Chunks of NumPy arrays, SciPy sparse matrices, pydata/sparse arrays or coiter tensors.
    mode : int, optional
        The axis the blocks are cut along; by default the one chunked into the most pieces. An
        array also chunked along other axes is rechunked to one chunk along them (logged).
    format : optional
        The blocks' coiter format; by default the chunk type's own (dense for NumPy).
    client, name
        As for :func:`partition`.
    """
    import dask.array as da

    if not isinstance(array, da.Array):
        raise TypeError(f"from_dask_array takes a dask.array.Array, not {type(array).__name__}")
    client = resolve_client(client)
    if array.ndim == 0:
        raise ShapeError("a 0-d dask array has no mode to partition: use coiter.distributed.put")
    if any(math.isnan(c) for chunks in array.chunks for c in chunks):
        raise ShapeError(
            "the dask array's chunk sizes are unknown: call array.compute_chunk_sizes() first"
        )
    if mode is None:
        mode = max(range(array.ndim), key=lambda m: len(array.chunks[m]))
    elif not -array.ndim <= mode < array.ndim:
        raise ShapeError(f"mode {mode} is not a mode of a dask array of order {array.ndim}")
    mode %= array.ndim
    others = {m: -1 for m in range(array.ndim) if m != mode and len(array.chunks[m]) > 1}
    if others:
        logger.info(
            "coiter: rechunking a dask array to one chunk along axes %s "
            "(blocks are cut along axis %d only)",
            sorted(others),
            mode,
        )
        array = array.rechunk(others)
    if any(c == 0 for c in array.chunks[mode]) and array.shape[mode] > 0:
        array = array.rechunk({mode: tuple(c for c in array.chunks[mode] if c > 0)})
    fmt = (
        as_format(format, array.ndim)
        if format is not None
        else _chunk_format(array._meta, array.ndim)
    )
    dtype = np.dtype(array.dtype)
    if isinstance(array._meta, np.ndarray):
        widest = max(array.chunks[mode]) * math.prod(
            e for m, e in enumerate(array.shape) if m != mode
        )
        check_fits(
            client, widest * dtype.itemsize, f"a chunk of the dask array {name or ''}".rstrip()
        )
    chunks = array.to_delayed().reshape(-1)
    state = format_state(fmt)
    converted = [
        delayed(_chunk_to_tensor, pure=True)(chunk, state, dtype, name) for chunk in chunks
    ]
    futures = client.compute(converted)
    bounds = [0, *np.cumsum(array.chunks[mode], dtype=np.int64).tolist()]
    return PartitionedTensor(futures, mode, bounds, array.shape, dtype, fmt, client, name)


def _block_as(tensor: Tensor, kind: str) -> Any:
    """One block as a chunk of ``kind`` (a task)."""
    if kind == "coiter":
        return tensor
    if kind == "numpy":
        return tensor.to_numpy()
    if kind == "scipy":
        import scipy.sparse as sp

        return sp.csr_matrix(tensor.to_scipy("csr"))
    return tensor.to_pydata("coo")


def _meta(kind: str, ndim: int, dtype: np.dtype[Any], fmt: Format) -> Any:
    empty = np.empty((0,) * ndim, dtype=dtype)
    if kind == "numpy":
        return empty
    if kind == "scipy":
        import scipy.sparse as sp

        return sp.csr_matrix((0, 0), dtype=dtype)
    if kind == "sparse":
        import sparse

        return sparse.COO.from_numpy(empty)
    from ..creation import zeros

    return zeros((0,) * ndim, format=fmt, dtype=dtype)


def to_dask_array(tensor: PartitionedTensor, kind: str = "coiter") -> dask.array.Array:
    """A ``dask.array.Array`` with one chunk per block of ``tensor`` (see
    :meth:`PartitionedTensor.to_dask_array`)."""
    import dask.array as da

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}, not {kind!r}")
    if kind == "scipy" and tensor.ndim != 2:
        raise ShapeError(f"SciPy chunks are matrices; this tensor has order {tensor.ndim}")
    meta = _meta(kind, tensor.ndim, tensor.dtype, tensor.format)
    pieces: list[da.Array] = [
        da.from_delayed(
            delayed(_block_as, pure=True)(block, kind),
            shape=tensor.block_shape(b),
            dtype=tensor.dtype,
            meta=meta,
        )
        for b, block in enumerate(tensor.blocks)
    ]
    if tensor.mode is None:
        return pieces[0]
    joined: da.Array = da.concatenate(pieces, axis=tensor.mode)  # (dask does not annotate it)
    return joined
