"""Elementwise functions of tensors computed on the stored entries: NumPy ufuncs, comparisons,
``abs``, ``astype``, ``**``, and the divisions whose 0/0 the compiler's kernels do not give
(operators.py calls them).

A function ``f`` of tensors is applied to the values at the union of the sparse operands'
stored coordinates (dense operands are read there); everywhere else every sparse operand is
zero, so the result there is ``f(0, ..., dense values)``, the *fill*. When the fill is zero
the result is sparse (SciPy's rule: ``np.sqrt``, ``np.multiply``, ``A != B`` stay sparse);
otherwise it is dense, within ``ct.config.max_dense_bytes`` (``np.exp(A)``, ``A == B``,
``A / 0``), else ``ct.ShapeError``: never a silent densification beyond the limit.
"""

import math

import numpy as np

from .conversion import as_operand
from .creation import wrap_dense
from .dtypes import value_dtype
from .format_inference import check_dense_size, default_sparse_format
from .formats import as_format, is_all_dense
from .shapes import broadcast_shape
from .tensor import Tensor, canonical, pack


def _is_tensor(x):
    return isinstance(x, Tensor)


def binary(fn, a, b):
    """``fn(a, b)`` for the binary operators Python maps here (NotImplemented for operands that
    are neither tensors, arrays nor scalars)."""
    a, b = as_operand(a), as_operand(b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    return elementwise(fn, a, b)


def _checked_dtype(dtype, fn):
    name = getattr(fn, "__name__", "the function")
    return value_dtype(dtype, f"the result of {name}")


def elementwise(fn, *inputs):
    """``fn(*inputs)`` elementwise with NumPy broadcasting; inputs are tensors or scalars
    (at least one tensor). See the module's docstring for the result's format."""
    operands = [canonical(x) if _is_tensor(x) else x for x in inputs]
    tensors = [x for x in operands if _is_tensor(x)]
    shape = broadcast_shape([t.shape for t in tensors])
    order = len(shape)
    sparse = [t for t in tensors if not is_all_dense(t.format)]
    sparse_ids = {id(t) for t in sparse}
    if not sparse:  # all dense: NumPy computes it, from views of the tensors' values
        with np.errstate(all="ignore"):
            result = np.asarray(fn(*[np.asarray(x) if _is_tensor(x) else x for x in operands]))
        _checked_dtype(result.dtype, fn)
        return wrap_dense(
            np.array(result, order="C", copy=None), as_format("dense", result.ndim), None
        )
    # The fill: every sparse operand zero, dense operands as they are (kept at their own shape,
    # which broadcasts to the result's: a dense row vector costs its own size only).
    fill_args = []
    for x in operands:
        if not _is_tensor(x):
            fill_args.append(x)
        elif id(x) in sparse_ids:
            fill_args.append(np.zeros((), dtype=x.dtype))
        else:
            fill_args.append(np.asarray(x).reshape((1,) * (order - x.ndim) + x.shape))
    coords = _union([_broadcast_entries(t, shape) for t in sparse], shape)
    index = tuple(coords.T)
    args = []
    for x in operands:
        if not _is_tensor(x):
            args.append(x)
        elif id(x) in sparse_ids:
            args.append(_aligned(x, shape, coords))
        else:
            args.append(np.broadcast_to(np.asarray(x), shape)[index])
    with np.errstate(all="ignore"):
        fill = np.asarray(fn(*fill_args))
        values = np.asarray(fn(*args))
    dtype = _checked_dtype(np.result_type(values, fill), fn)
    if not np.any(fill):  # zero everywhere off the stored entries: a sparse result
        keep = values != 0
        like = sparse[0].format if sparse[0].shape == shape else None
        bits = 64 if any(t.index_dtype == np.int64 for t in sparse) else 32
        return pack(
            default_sparse_format(order, like),
            shape,
            [c[keep] for c in index],
            values[keep].astype(dtype, copy=False),
            True,
            index_bits=bits,
        )
    check_dense_size(
        shape,
        dtype,
        f"of {getattr(fn, '__name__', 'the function')} (nonzero where the "
        "sparse operands are zero)",
    )
    result = np.empty(shape, dtype=dtype)
    result[...] = fill
    result[index] = values
    return wrap_dense(result, as_format("dense", order), None)


def _broadcast_entries(tensor, shape):
    """The coordinates (nnz, len(shape)) of ``tensor``'s entries broadcast to ``shape``: an
    entry is repeated along every mode it broadcasts over."""
    coords, _ = tensor.coords()
    return _broadcast_coords(coords, tensor.shape, shape)


def _broadcast_coords(coords, own, shape):
    offset = len(shape) - len(own)
    full = np.zeros((coords.shape[0], len(shape)), dtype=np.int64)
    full[:, offset:] = coords
    for m in range(len(shape)):
        if (own[m - offset] if m >= offset else 1) == 1 and shape[m] != 1:
            n = len(full)
            full = np.repeat(full, shape[m], axis=0)
            full[:, m] = np.tile(np.arange(shape[m]), n)
    return full


def _keys(coords, shape):
    """Row-major linear positions of ``coords`` (sortable keys), or None when they overflow."""
    if math.prod(shape) >= 2**63:
        return None
    return (
        np.ravel_multi_index(tuple(coords.T), shape)
        if coords.size
        else np.zeros(len(coords), np.int64)
    )


def _union(coord_lists, shape):
    """The sorted union of coordinate arrays (each (n, order))."""
    if len(coord_lists) == 1:
        return coord_lists[0]
    joined = np.concatenate(coord_lists)
    keys = _keys(joined, shape)
    if keys is None:
        return np.unique(joined, axis=0)
    unique = np.unique(keys)
    return (
        np.stack(np.unravel_index(unique, shape), axis=1) if len(shape) else joined[: len(unique)]
    )


def _aligned(tensor, shape, coords):
    """``tensor``'s values at ``coords`` (broadcast to ``shape``), zero where it stores none."""
    own, values = tensor.coords()
    own = _broadcast_coords(own, tensor.shape, shape)
    if own.shape[0] != len(values):  # repeated along broadcast modes
        values = np.repeat(values, own.shape[0] // max(len(values), 1))
    out = np.zeros(len(coords), dtype=tensor.dtype)
    keys, own_keys = _keys(coords, shape), _keys(own, shape)
    if keys is None:
        lookup = {tuple(c): k for k, c in enumerate(coords)}
        out[[lookup[tuple(c)] for c in own]] = values
        return out
    order = np.argsort(keys, kind="stable")
    out[order[np.searchsorted(keys, own_keys, sorter=order)]] = values
    return out


def nonzero(tensor):
    """NumPy's ``nonzero``: one coordinate array per mode, row-major order."""
    tensor = canonical(tensor)
    if tensor.ndim == 0:
        raise ValueError("nonzero of a 0-d tensor; use bool(T)")
    coords, values = tensor.coords()
    coords = coords[values != 0]
    keys = _keys(coords, tensor.shape)
    order = np.lexsort(coords.T[::-1]) if keys is None else np.argsort(keys, kind="stable")
    return tuple(np.ascontiguousarray(coords[order, m]) for m in range(tensor.ndim))


def where(condition, x=None, y=None):
    """``np.where``: one argument gives ``nonzero``; three choose elementwise."""
    if x is None and y is None:
        return nonzero(as_operand(condition))
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return elementwise(np.where, *(as_operand(v) for v in (condition, x, y)))
