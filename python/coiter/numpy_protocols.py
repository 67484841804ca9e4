"""NumPy's protocols (``__array_ufunc__``, ``__array_function__``) for tensors.

Ufuncs: ``np.add``, ``np.subtract``, ``np.multiply``, ``np.divide``, ``np.negative`` and
``np.matmul`` are the tensor operators (lazy, fused kernels); every other single-output ufunc is
computed on the stored entries (elementwise.py), sparse where the ufunc keeps zeros.
Functions: the ones in ``_FUNCTIONS`` have sparse implementations; any other NumPy function
gets NumPy arrays (``np.asarray`` of each tensor) when every tensor fits in
``ct.config.max_dense_bytes``, and raises ``ct.ShapeError`` otherwise; the densification is
logged at INFO level, so it is never silent.
"""

import logging
import math

import numpy as np
import scipy.sparse as sp

from . import elementwise as ew
from . import operators as ops
from .config import config
from .conversion import as_operand
from .errors import ShapeError
from .evaluate import einsum
from .formats import is_all_dense
from .shaping import concatenate, stack
from .tensor import Tensor

logger = logging.getLogger("coiter")

_OPERATOR_UFUNCS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div"}


def _known(value):
    return isinstance(
        value, (Tensor, np.ndarray, np.generic, int, float, complex, bool, list)
    ) or sp.issparse(value)


def array_ufunc(ufunc, method, inputs, kwargs):
    if not all(_known(x) for x in inputs) or kwargs.get("out") is not None or "where" in kwargs:
        return NotImplemented
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    if method == "reduce":
        name = {np.add: "add", np.maximum: "max", np.minimum: "min"}.get(ufunc)
        axis, keepdims = kwargs.pop("axis", 0), kwargs.pop("keepdims", False)
        if name is None or len(inputs) != 1 or kwargs:
            return NotImplemented
        return ops.reduce(
            name, as_operand(inputs[0]), axis, keepdims, dtype if name == "add" else None
        )
    if kwargs:
        return NotImplemented
    if method != "__call__" or ufunc.nout != 1:
        return NotImplemented
    operands = [as_operand(x) for x in inputs]
    if any(x is NotImplemented for x in operands):
        return NotImplemented
    if ufunc is np.matmul:
        result = ops.matmul(*operands)
    elif ufunc in _OPERATOR_UFUNCS:
        result = ops.arithmetic(_OPERATOR_UFUNCS[ufunc], *operands)
    elif ufunc is np.negative:
        result = ops.negative(operands[0])
    elif ufunc is np.positive:
        result = operands[0]
    else:
        result = ew.elementwise(ufunc, *operands)
    return result if dtype is None else result.astype(dtype)


# -- __array_function__ -----------------------------------------------------------------------
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _no_out(out, kwargs, "sum")
    return ops.reduce("add", as_operand(a), axis, keepdims, dtype)


def _max(a, axis=None, out=None, keepdims=False, **kwargs):
    _no_out(out, kwargs, "max")
    return ops.reduce("max", as_operand(a), axis, keepdims)


def _min(a, axis=None, out=None, keepdims=False, **kwargs):
    _no_out(out, kwargs, "min")
    return ops.reduce("min", as_operand(a), axis, keepdims)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _no_out(out, kwargs, "mean")
    return ops.mean(as_operand(a), axis, keepdims, dtype)


def _no_out(out, kwargs, name):
    if out is not None or kwargs:
        raise TypeError(
            f"np.{name} of a coiter tensor: unsupported arguments "
            f"{['out'] * (out is not None) + sorted(kwargs)}"
        )


def _einsum(subscripts, *operands, out=None, dtype=None, optimize=False, **kwargs):
    _no_out(out, kwargs, "einsum")
    return einsum(subscripts, *operands, dtype=dtype)


def _transpose(a, axes=None):
    return ops.transpose(as_operand(a), axes)


def _reshape(a, shape=None, order="C", **kwargs):
    shape = kwargs.pop("newshape", shape)
    if order != "C" or kwargs:
        raise TypeError("np.reshape of a coiter tensor: only order='C'")
    return ops.reshape(as_operand(a), shape)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_out(out, {}, "concatenate")
    result = concatenate(arrays, axis)
    return result if dtype is None else result.astype(dtype)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_out(out, {}, "stack")
    result = stack(arrays, axis)
    return result if dtype is None else result.astype(dtype)


def _copy(a, order="K", subok=False):
    return as_operand(a).copy()


def _real(a):
    return as_operand(a).real


def _imag(a):
    return as_operand(a).imag


def _round(a, decimals=0, out=None):
    _no_out(out, {}, "round")
    return ew.elementwise(lambda v: np.round(v, decimals), as_operand(a))


def _clip(a, a_min=None, a_max=None, out=None, **kwargs):
    _no_out(out, {k: v for k, v in kwargs.items() if k not in ("min", "max")}, "clip")
    low = kwargs.get("min", a_min)
    high = kwargs.get("max", a_max)
    return ew.elementwise(lambda v: np.clip(v, low, high), as_operand(a))


def _count_nonzero(a, axis=None, *, keepdims=False):
    a = as_operand(a)
    if axis is None and not keepdims:
        return a.count_nonzero()
    return ops.reduce("add", (a != 0).astype(np.int64), axis, keepdims)


def _where(condition, x=None, y=None):
    return ew.where(condition, x, y)


def _nonzero(a):
    return ew.nonzero(as_operand(a))


def _matmul(a, b, **kwargs):
    return ops.matmul(a, b)


_FUNCTIONS = {
    np.einsum: _einsum,
    np.tensordot: lambda a, b, axes=2: ops.tensordot(a, b, axes),
    np.dot: lambda a, b, out=None: ops.dot(a, b) if out is None else _no_out(out, {}, "dot"),
    np.sum: _sum,
    np.max: _max,
    np.min: _min,
    np.amax: _max,
    np.amin: _min,
    np.mean: _mean,
    np.transpose: _transpose,
    np.reshape: _reshape,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.where: _where,
    np.nonzero: _nonzero,
    np.copy: _copy,
    np.real: _real,
    np.imag: _imag,
    np.squeeze: lambda a, axis=None: as_operand(a).squeeze(axis),
    np.round: _round,
    np.around: _round,
    np.clip: _clip,
    np.count_nonzero: _count_nonzero,
    np.shape: lambda a: as_operand(a).shape,
    np.ndim: lambda a: as_operand(a).ndim,
    np.size: lambda a, axis=None: as_operand(a).size if axis is None else as_operand(a).shape[axis],
    np.result_type: None,  # (not dispatched: listed so a reader knows it was considered)
}
_FUNCTIONS.pop(np.result_type)


def array_function(func, types, args, kwargs):
    implementation = _FUNCTIONS.get(func)
    if implementation is not None:
        return implementation(*args, **kwargs)
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    name = getattr(func, "__name__", "a NumPy function")
    dense_args = _densified(args, name)
    dense_kwargs = {k: _densified(v, name) for k, v in kwargs.items()}
    return func(*dense_args, **dense_kwargs)


def _densified(value, name):
    """``value`` with every tensor in it (also inside lists and tuples) as a NumPy array, or
    ShapeError when one would exceed ct.config.max_dense_bytes."""
    if isinstance(value, Tensor):
        nbytes = math.prod(value.shape) * value.dtype.itemsize
        if nbytes > config.max_dense_bytes:
            raise ShapeError(
                f"np.{name} has no sparse implementation in coiter, and the dense copy of "
                f"the {value.shape} tensor would need {nbytes} bytes, more than "
                f"ct.config.max_dense_bytes ({config.max_dense_bytes})"
            )
        if not is_all_dense(value.format):
            logger.info(
                "coiter: np.%s has no sparse implementation; computing it on a dense copy "
                "of a %s tensor of shape %s",
                name,
                value.format,
                value.shape,
            )
        return value.to_numpy()
    if isinstance(value, (list, tuple)):
        return type(value)(_densified(v, name) for v in value)
    return value
