"""Where a mode is cut into blocks: contiguous coordinate ranges, balanced by stored entries,
by bytes (SuperTaco's byte-based split, Shinde's SuperTaco thesis, §5.1) or by coordinates.

A partition of a mode of extent ``n`` into ``P`` blocks is described by its *bounds*: ``P + 1``
strictly increasing integers from 0 to ``n``; block ``b`` holds coordinates ``bounds[b]`` to
``bounds[b + 1] - 1``. Every block holds at least one coordinate (an empty block would give a
max or min reduction nothing to reduce, and a task nothing to do).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import DTypeLike

from ..errors import ShapeError
from ..formats import Format, is_all_dense
from ..tensor import Tensor

BALANCES = ("nnz", "bytes", "coords")


def check_balance(balance: str) -> str:
    """``balance`` when it names a balance, else ValueError listing them."""
    if balance not in BALANCES:
        raise ValueError(
            f"balance must be one of {', '.join(map(repr, BALANCES))}, not {balance!r}"
        )
    return balance


def check_parts(parts: int, extent: int, what: str) -> int:
    """``parts`` as an int when 1 <= parts <= extent (every block holds a coordinate)."""
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)):
        raise TypeError(f"parts must be an integer, not {type(parts).__name__}")
    parts = int(parts)
    if parts < 1:
        raise ValueError(f"parts must be at least 1, not {parts}")
    if parts > max(extent, 1):
        raise ShapeError(
            f"{what} has extent {extent}: it cannot be cut into {parts} blocks of at "
            "least one coordinate each"
        )
    return parts


def check_bounds(bounds: Sequence[int], extent: int, what: str) -> tuple[int, ...]:
    """Bounds given by the caller, checked: 0 first, ``extent`` last, strictly increasing."""
    array = np.asarray(bounds)
    if array.ndim != 1 or array.size < 2 or not np.issubdtype(array.dtype, np.integer):
        raise ShapeError(
            f"bounds of {what} must be a list of at least two integers, got {bounds!r}"
        )
    if array[0] != 0 or array[-1] != extent:
        raise ShapeError(
            f"bounds of {what} must run from 0 to its extent {extent}, got "
            f"{array[0]} to {array[-1]}"
        )
    if extent > 0 and np.any(np.diff(array) <= 0):
        raise ShapeError(
            f"bounds of {what} must increase strictly (no empty block), got {array.tolist()}"
        )
    return tuple(int(b) for b in array)


def uniform_bounds(extent: int, parts: int) -> tuple[int, ...]:
    """``parts`` blocks whose extents differ by at most one coordinate."""
    if extent == 0:
        return (0, 0)
    return tuple(int(b) for b in (np.arange(parts + 1, dtype=np.int64) * extent) // parts)


def bounds_from_weights(weights: np.ndarray, parts: int) -> tuple[int, ...]:
    """Cuts of a mode whose coordinates weigh ``weights`` into ``parts`` blocks of nearly equal
    weight: each cut is placed at the prefix nearest ``k / parts`` of the total, so a block
    weighs at most ``total / parts`` plus the heaviest coordinate (unless one coordinate per
    block has to be kept, which only a few very heavy coordinates force)."""
    extent = len(weights)
    total = float(weights.sum()) if extent else 0.0
    if extent == 0 or total == 0.0:
        return uniform_bounds(extent, parts)
    prefix = np.cumsum(weights, dtype=np.float64)
    targets = np.arange(1, parts, dtype=np.float64) * (total / parts)
    # The first coordinate at which the prefix reaches the target; cut before or after it,
    # whichever prefix lies nearer.
    at = np.searchsorted(prefix, targets, side="left")
    after = prefix[np.minimum(at, extent - 1)]
    before = np.where(at > 0, prefix[np.maximum(at - 1, 0)], 0.0)
    cuts = np.where(after - targets < targets - before, at + 1, at).astype(np.int64)
    # At least one coordinate per block: push cuts forward, then back from the end.
    bounds = np.concatenate([[0], cuts, [extent]]).astype(np.int64)
    for k in range(1, parts):
        bounds[k] = max(bounds[k], bounds[k - 1] + 1)
    for k in range(parts - 1, 0, -1):
        bounds[k] = min(bounds[k], bounds[k + 1] - 1)
    return tuple(int(b) for b in bounds)


def entries_per_coordinate(tensor: Tensor, mode: int) -> np.ndarray:
    """How many stored entries each coordinate of ``mode`` holds (int64, one per coordinate)."""
    extent = tensor.shape[mode]
    if is_all_dense(tensor.format):
        per_slice = tensor.size // extent if extent else 0
        return np.full(extent, per_slice, dtype=np.int64)
    fmt = tensor.format
    levels = [level.name for level in fmt.levels]
    if fmt.name is None and levels == ["dense", "compressed"] and fmt.mode_order[0] == mode:
        # CSR (or CSC cut along columns): the pointers count each row's entries (O(rows)).
        return np.diff(tensor.levels[1].arrays["pos"]).astype(np.int64)
    coords, _ = tensor.coords()
    return np.bincount(coords[:, mode], minlength=extent).astype(np.int64)


def entry_bytes(fmt: Format, dtype: DTypeLike, index_dtype: DTypeLike) -> tuple[int, int]:
    """(bytes each stored entry costs, bytes each coordinate of a CSR-like top mode costs) in
    format ``fmt``: the value and one index per level with a coordinate array; a row pointer
    per row when the first level is dense over a compressed one."""
    index = np.dtype(index_dtype).itemsize
    names = [level.name for level in fmt.levels]
    per_entry = np.dtype(dtype).itemsize + index * sum(
        name in ("compressed", "singleton", "hashed") for name in names
    )
    per_row = index if names[:2] == ["dense", "compressed"] else 0
    return per_entry, per_row


def weights_of_counts(
    counts: np.ndarray,
    balance: str,
    fmt: Format,
    dtype: DTypeLike,
    index_dtype: DTypeLike,
    mode: int,
    coordinates_per_count: int = 1,
) -> np.ndarray:
    """Per-coordinate weights under ``balance`` ("nnz" or "bytes") from the stored entries of
    each coordinate of ``mode`` (or of each bin of ``coordinates_per_count`` coordinates)."""
    if balance == "nnz":
        return counts
    per_entry, per_row = entry_bytes(fmt, dtype, index_dtype)
    row_cost = per_row * coordinates_per_count if fmt.mode_order[0] == mode else 0
    return counts * per_entry + row_cost


def slice_weights(tensor: Tensor, mode: int, balance: str) -> np.ndarray | None:
    """The weight of each coordinate of ``mode`` under ``balance`` (None for "coords")."""
    if balance == "coords":
        return None
    if balance == "bytes" and is_all_dense(tensor.format):
        return None  # every slice of a dense tensor has the same bytes
    counts = entries_per_coordinate(tensor, mode)
    return weights_of_counts(counts, balance, tensor.format, tensor.dtype, tensor.index_dtype, mode)


def balanced_bounds(tensor: Tensor, mode: int, parts: int, balance: str) -> tuple[int, ...]:
    """Bounds of ``parts`` blocks of ``tensor`` along ``mode`` under ``balance``."""
    weights = slice_weights(tensor, mode, balance)
    if weights is None:
        return uniform_bounds(tensor.shape[mode], parts)
    return bounds_from_weights(weights, parts)
