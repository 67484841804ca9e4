"""Cutting a tensor into blocks along one mode, and joining blocks back.

A block holds the entries of a contiguous coordinate range ``[lo, hi)`` of the mode, in
*local* coordinates (``lo`` subtracted), with the tensor's format, dtype and index width: the
unchanged single-process kernel runs on it (Shinde's SuperTaco thesis, §3.5).

When the mode is the format's first level and every level is dense, compressed or singleton
(CSR, CSF, DCSR, COO, dense), a block is cut from the level arrays directly: one binary search
at the top, then each level's range follows from the pointers of the level above (O(levels +
the block's own arrays)). Otherwise (a CSR matrix cut along columns, hashed levels, ...) the
entries are grouped by block once and every block is packed from its coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..formats import Format, is_all_dense
from ..tensor import Tensor, pack

_SLICEABLE = ("dense", "compressed", "singleton")


def _top_sliceable(fmt: Format, mode: int) -> bool:
    """Whether blocks of ``mode`` are ranges of the level arrays (see the module's text)."""
    if fmt.name is not None or fmt.mode_order[0] != mode:
        return False
    levels = fmt.levels
    if any(level.name not in _SLICEABLE for level in levels):
        return False
    return levels[0].name == "dense" or bool(levels[0].properties["ordered"])


def block_shape(shape: Sequence[int], mode: int, lo: int, hi: int) -> tuple[int, ...]:
    """``shape`` with ``mode``'s extent replaced by the block's."""
    return tuple(hi - lo if m == mode else e for m, e in enumerate(shape))


def cut_block(tensor: Tensor, mode: int, lo: int, hi: int) -> Tensor:
    """The block ``[lo, hi)`` of ``tensor`` along ``mode``, in local coordinates."""
    if is_all_dense(tensor.format):
        array = np.asarray(tensor)
        index = tuple(slice(lo, hi) if m == mode else slice(None) for m in range(tensor.ndim))
        from ..conversion import asarray

        return asarray(np.ascontiguousarray(array[index]), name=tensor.name)
    if _top_sliceable(tensor.format, mode):
        return _cut_levels(tensor, lo, hi)
    coords, values = tensor.coords()
    inside = np.flatnonzero((coords[:, mode] >= lo) & (coords[:, mode] < hi))
    return _packed_block(tensor, mode, lo, hi, coords[inside], values[inside])


def cut_blocks(tensor: Tensor, mode: int, bounds: Sequence[int]) -> list[Tensor]:
    """Every block of ``tensor`` along ``mode`` between consecutive ``bounds``."""
    pairs = list(zip(bounds[:-1], bounds[1:]))
    if is_all_dense(tensor.format) or _top_sliceable(tensor.format, mode):
        return [cut_block(tensor, mode, lo, hi) for lo, hi in pairs]
    # Group the entries by block once (a stable sort keeps each block's storage order).
    coords, values = tensor.coords()
    block_of = np.searchsorted(
        np.asarray(bounds[1:-1], dtype=np.int64), coords[:, mode], side="right"
    )
    order = np.argsort(block_of, kind="stable")
    starts = np.searchsorted(block_of[order], np.arange(len(pairs) + 1))
    blocks = []
    for b, (lo, hi) in enumerate(pairs):
        take = order[starts[b] : starts[b + 1]]
        blocks.append(_packed_block(tensor, mode, lo, hi, coords[take], values[take]))
    return blocks


def _packed_block(
    tensor: Tensor, mode: int, lo: int, hi: int, coords: np.ndarray, values: np.ndarray
) -> Tensor:
    """The block ``[lo, hi)`` packed from its entries (global ``coords``, a copy we may shift)."""
    coords[:, mode] -= lo
    bits = 64 if tensor.index_dtype == np.int64 else 32
    return pack(
        tensor.format,
        block_shape(tensor.shape, mode, lo, hi),
        [coords[:, m] for m in range(tensor.ndim)],
        values,
        sum_duplicates=False,
        name=tensor.name,
        index_bits=bits,
    )


def _cut_levels(tensor: Tensor, lo: int, hi: int) -> Tensor:
    """The block ``[lo, hi)`` of the first level's mode, cut from the level arrays."""
    fmt = tensor.format
    levels = tensor.levels
    index_dtype = tensor.index_dtype
    arrays: list[dict[str, NDArray[Any]]] = []
    parameters: list[dict[str, int]] = []
    begin = end = 0
    for k, level in enumerate(levels):
        name = level.type.name
        if k == 0:
            if name == "dense":
                begin, end = lo, hi
                arrays.append({})
                parameters.append({"size": hi - lo})
                continue
            # An ordered compressed top level: its coordinates in [lo, hi) by binary search.
            pos, crd = level.pos, level.crd
            first, last = int(pos[0]), int(pos[1])
            begin = first + int(np.searchsorted(crd[first:last], lo, side="left"))
            end = first + int(np.searchsorted(crd[first:last], hi, side="left"))
            arrays.append(
                {
                    "pos": np.array([0, end - begin], dtype=index_dtype),
                    "crd": crd[begin:end] - index_dtype.type(lo),
                }
            )
            parameters.append({})
            continue
        if name == "dense":
            size = int(level.size)
            begin, end = begin * size, end * size
            arrays.append({})
            parameters.append({"size": size})
        elif name == "compressed":
            pos, crd = level.pos, level.crd
            child_begin, child_end = int(pos[begin]), int(pos[end])
            arrays.append(
                {"pos": pos[begin : end + 1] - pos[begin], "crd": crd[child_begin:child_end]}
            )
            parameters.append({})
            begin, end = child_begin, child_end
        else:  # singleton: one coordinate per position of the level above
            arrays.append({"crd": level.crd[begin:end]})
            parameters.append({})
    shape = block_shape(tensor.shape, fmt.mode_order[0], lo, hi)
    return Tensor._from_level_arrays(
        fmt, shape, index_dtype, arrays, parameters, tensor.values[begin:end], tensor.name
    )


def join_blocks(
    blocks: Sequence[Tensor], mode: int, bounds: Sequence[int], shape: Sequence[int], fmt: Format
) -> Tensor:
    """The tensor of ``shape`` and format ``fmt`` whose blocks along ``mode`` are ``blocks``."""
    shape = tuple(int(e) for e in shape)
    if len(blocks) == 1:
        return blocks[0]
    if is_all_dense(fmt):
        from ..conversion import asarray

        return asarray(np.concatenate([np.asarray(b) for b in blocks], axis=mode))
    if _top_sliceable(fmt, mode) and all(b.format == fmt for b in blocks):
        return _join_levels(blocks, bounds, shape, fmt)
    columns, values = [], []
    for block, lo in zip(blocks, bounds):
        coords, vals = block.coords()
        coords = coords.copy()
        coords[:, mode] += lo
        columns.append(coords)
        values.append(vals)
    coords = np.concatenate(columns) if columns else np.zeros((0, len(shape)), dtype=np.int64)
    bits = 64 if any(b.index_dtype == np.int64 for b in blocks) else 32
    return pack(
        fmt,
        shape,
        [coords[:, m] for m in range(len(shape))],
        np.concatenate(values),
        sum_duplicates=False,
        index_bits=bits,
    )


def _join_levels(
    blocks: Sequence[Tensor], bounds: Sequence[int], shape: tuple[int, ...], fmt: Format
) -> Tensor:
    """Blocks of the first level's mode joined level by level (the inverse of _cut_levels)."""
    total_entries = sum(int(b.values.size) for b in blocks)
    wide = (
        any(b.index_dtype == np.int64 for b in blocks)
        or total_entries > np.iinfo(np.int32).max
        or max(shape, default=0) > np.iinfo(np.int32).max
    )
    index_dtype = np.dtype(np.int64 if wide else np.int32)
    per_block = [b.levels for b in blocks]
    arrays: list[dict[str, NDArray[Any]]] = []
    parameters: list[dict[str, int]] = []
    for k, level_type in enumerate(fmt.levels):
        name = level_type.name
        if name == "dense":
            size = shape[fmt.mode_order[0]] if k == 0 else int(per_block[0][k].size)
            arrays.append({})
            parameters.append({"size": size})
        elif name == "compressed":
            crds = [levels[k].crd.astype(index_dtype) for levels in per_block]
            if k == 0:  # the top level holds the split mode's coordinates: shift them back
                crds = [crd + index_dtype.type(lo) for crd, lo in zip(crds, bounds)]
                pos = np.array([0, sum(len(c) for c in crds)], dtype=index_dtype)
            else:
                pieces, offset = [np.zeros(1, dtype=index_dtype)], 0
                for levels in per_block:
                    p = levels[k].pos.astype(index_dtype)
                    pieces.append(p[1:] + index_dtype.type(offset))
                    offset += int(p[-1])
                pos = np.concatenate(pieces)
            arrays.append({"pos": pos, "crd": np.concatenate(crds)})
            parameters.append({})
        else:  # singleton
            arrays.append(
                {"crd": np.concatenate([levels[k].crd.astype(index_dtype) for levels in per_block])}
            )
            parameters.append({})
    values = np.concatenate([b.values for b in blocks])
    return Tensor._from_level_arrays(fmt, shape, index_dtype, arrays, parameters, values)
