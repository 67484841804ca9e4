"""Joining tensors: ``np.concatenate`` and ``np.stack`` of tensors (and arrays). All dense:
NumPy joins them. Otherwise the entries are joined with shifted coordinates and packed once, in
the first sparse operand's format when it fits the result (SciPy's ``vstack`` of CSR is CSR)."""

import numpy as np

from .conversion import as_operand, asarray
from .errors import ShapeError
from .format_inference import default_sparse_format
from .formats import is_all_dense
from .shapes import normalize_axes
from .tensor import Tensor, canonical, pack


def _tensors(arrays, what):
    tensors = [as_operand(a) for a in arrays]
    if not tensors:
        raise ValueError(f"{what} needs at least one array")
    if not all(isinstance(t, Tensor) for t in tensors):
        raise ValueError(f"{what}: zero-dimensional operands cannot be joined")
    return tensors


def concatenate(arrays, axis=0):
    tensors = _tensors(arrays, "concatenate")
    ndim = tensors[0].ndim
    if axis is None:
        tensors = [t.reshape(-1) for t in tensors]
        axis, ndim = 0, 1
    if ndim == 0:
        raise ValueError("zero-dimensional tensors cannot be concatenated")
    (axis,) = normalize_axes(axis, ndim)
    for n, t in enumerate(tensors):
        if t.ndim != ndim or any(
            t.shape[m] != tensors[0].shape[m] for m in range(ndim) if m != axis
        ):
            raise ShapeError(
                f"concatenate: operand {n} has shape {t.shape}, which does not match "
                f"{tensors[0].shape} except along axis {axis}"
            )
    shape = list(tensors[0].shape)
    shape[axis] = sum(t.shape[axis] for t in tensors)
    return _join(tensors, axis, tuple(shape), new_axis=False)


def stack(arrays, axis=0):
    tensors = _tensors(arrays, "stack")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ShapeError(f"stack: all operands need one shape, got {[t.shape for t in tensors]}")
    (axis,) = normalize_axes(axis, tensors[0].ndim + 1)
    shape = list(tensors[0].shape)
    shape.insert(axis, len(tensors))
    return _join(tensors, axis, tuple(shape), new_axis=True)


def _join(tensors, axis, shape, new_axis):
    dtype = np.result_type(*[t.dtype for t in tensors])
    if all(is_all_dense(t.format) for t in tensors):
        join = np.stack if new_axis else np.concatenate
        return asarray(join([np.asarray(t) for t in tensors], axis=axis).astype(dtype, copy=False))
    columns, values, offset = [], [], 0
    for t in tensors:
        coords, vals = canonical(t).coords()
        if is_all_dense(t.format):  # its nonzeros only
            coords, vals = coords[vals != 0], vals[vals != 0]
        if new_axis:
            coords = np.insert(coords, axis, offset, axis=1)
            offset += 1
        else:
            coords = coords.copy()
            coords[:, axis] += offset
            offset += t.shape[axis]
        columns.append(coords)
        values.append(vals.astype(dtype, copy=False))
    coords = np.concatenate(columns)
    like = next(t.format for t in tensors if not is_all_dense(t.format))
    bits = 64 if any(t.index_dtype == np.int64 for t in tensors) else 32
    return pack(
        default_sparse_format(len(shape), like),
        shape,
        [coords[:, m] for m in range(len(shape))],
        np.concatenate(values),
        True,
        index_bits=bits,
    )
