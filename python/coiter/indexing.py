"""NumPy-style indexing of tensors: ``T[1:3, :]``, ``T[5]``, ``T[:, [0, 4]]``, ``T[None, ...]``.

Integers, slices (any step), ``None``, ``...``, and one integer (or boolean) array index, on any
mode, as pydata/sparse allows. A dense tensor is indexed by NumPy (a view where NumPy gives
one). A sparse tensor's stored entries are selected and renumbered, then packed into its own
format when the order is unchanged, else the default sparse format of the new order (CSR for a
matrix, compressed for a vector): O(nnz) in general, O(entries of the selected rows) when the
first index selects rows of a CSR-like tensor (dense first level over mode 0).
"""

from typing import Any

import numpy as np

from .conversion import asarray
from .errors import OutOfRange
from .format_inference import default_sparse_format
from .formats import is_all_dense
from .tensor import canonical, pack


def getitem(tensor, key):
    key = key if isinstance(key, tuple) else (key,)
    modes = _expand(key, tensor.shape)
    if is_all_dense(tensor.format):
        result = np.asarray(tensor)[tuple(k for _, k in modes)]
        return result if np.ndim(result) == 0 else asarray(result)
    return _sparse(tensor, modes)


def _expand(key, shape):
    """``[(mode or None, normalized key)]``: every mode of the tensor once, in order, with
    ``None`` (new axes) in between; integers bounds-checked, arrays as int64 arrays."""
    ndim = len(shape)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices: the tensor has {ndim} modes but {used} were indexed")
    if Ellipsis in [k for k in key if not isinstance(k, np.ndarray)]:
        at = next(n for n, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (ndim - used) + key[at + 1 :]
    else:
        key = key + (slice(None),) * (ndim - used)
    modes: list[tuple[int | None, Any]] = []
    mode = 0
    arrays = 0
    for k in key:
        if k is None:
            modes.append((None, None))
            continue
        extent = shape[mode]
        if isinstance(k, (int, np.integer)):
            if not -extent <= k < extent:
                raise OutOfRange(f"index {k} is out of range for mode {mode} (extent {extent})")
            k = int(k) % extent
        elif isinstance(k, slice):
            pass
        else:
            array = np.asarray(k)
            if array.dtype == bool:
                if array.shape != (extent,):
                    raise IndexError(
                        f"boolean index of shape {array.shape} for mode {mode} of extent {extent}"
                    )
                array = np.flatnonzero(array)
            if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
                raise IndexError(
                    f"only integers, slices, None, ... and 1-D integer or boolean arrays "
                    f"index a tensor; got {k!r}"
                )
            array = array.astype(np.int64)
            if array.size and (array.min() < -extent or array.max() >= extent):
                raise OutOfRange(
                    f"an index in {k!r} is out of range for mode {mode} (extent {extent})"
                )
            k = array % extent if extent else array
            arrays += 1
        modes.append((mode, k))
        mode += 1
    if arrays > 1:
        raise IndexError(
            "coiter tensors take one array index at a time (as pydata/sparse); index "
            "one mode, then the other"
        )
    return modes


def _sparse(tensor, modes):
    tensor = canonical(tensor)
    coords, values, first_done = _entries(tensor, modes)
    keep = np.ones(len(values), dtype=bool)
    columns: list[Any] = []
    shape: list[int] = []
    for mode, k in modes:
        if mode is None:
            columns.append(None)
            shape.append(1)
            continue
        c = coords[:, mode]
        if isinstance(k, int):
            if not (first_done and mode == 0):
                keep &= c == k
            continue
        if isinstance(k, slice):
            start, stop, step = k.indices(tensor.shape[mode])
            length = len(range(start, stop, step))
            if step > 0:
                keep &= (c >= start) & (c < stop) & ((c - start) % step == 0)
                columns.append((c - start) // step)
            else:
                keep &= (c <= start) & (c > stop) & ((start - c) % -step == 0)
                columns.append((start - c) // -step)
            shape.append(length)
            continue
        columns.append(("array", mode, k))
        shape.append(len(k))
    coords, values = coords[keep], values[keep]
    columns = [c[keep] if isinstance(c, np.ndarray) else c for c in columns]
    for n, c in enumerate(columns):
        if isinstance(c, tuple):  # the array index: each entry once per position that names it
            _, mode, k = c
            order = np.argsort(k, kind="stable")
            left = np.searchsorted(k[order], coords[:, mode], "left")
            counts = np.searchsorted(k[order], coords[:, mode], "right") - left
            entry = np.repeat(np.arange(len(values)), counts)
            offsets = np.arange(len(entry)) - np.repeat(np.cumsum(counts) - counts, counts)
            columns = [x[entry] if isinstance(x, np.ndarray) else x for x in columns]
            columns[n] = order[np.repeat(left, counts) + offsets]
            values = values[entry]
    columns = [np.zeros(len(values), dtype=np.int64) if c is None else c for c in columns]
    if not shape:
        return values.sum() if len(values) else tensor.dtype.type(0)
    bits = 64 if tensor.index_dtype == np.int64 else 32
    return pack(
        default_sparse_format(len(shape), tensor.format),
        shape,
        columns,
        values,
        True,
        index_bits=bits,
    )


def _entries(tensor, modes):
    """The entries a key can select: ``(coords, values, whether an integer first index was
    applied already)``. A tensor whose first level is dense over mode 0 followed by a
    compressed level (CSR, CSR-like tensors) gives only the rows the first index selects."""
    fmt = tensor.format
    first = next(k for mode, k in modes if mode == 0) if tensor.ndim else None
    rows_first = (
        fmt.name is None
        and tensor.ndim == 2
        and tuple(fmt.mode_order) == (0, 1)
        and fmt.levels[0].name == "dense"
        and fmt.levels[1].name == "compressed"
    )
    if rows_first and isinstance(first, (int, slice)):
        if isinstance(first, int):
            start, stop = first, first + 1
        else:
            start, stop, step = first.indices(tensor.shape[0])
            start, stop = (start, stop) if step > 0 else (stop + 1, start + 1)
            stop = max(stop, start)
        level = tensor.levels[1]
        lo, hi = int(level.pos[start]), int(level.pos[stop])
        rows = np.repeat(np.arange(start, stop), np.diff(level.pos[start : stop + 1]))
        coords = np.stack([rows, level.crd[lo:hi]], axis=1).astype(np.int64)
        return coords, tensor.values[lo:hi], isinstance(first, int)
    coords, values = tensor.coords()
    return coords, values, False
