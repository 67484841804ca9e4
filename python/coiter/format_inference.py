"""The result format coiter infers when none is given (docs/reference.md, "Result formats")."""

import math

import numpy as np

from . import _core
from .config import config
from .errors import ShapeError
from .formats import Format, as_format
from .notation import core_expression, core_variables


def assemblable(fmt: Format) -> bool:
    """Whether a kernel can compute a result in this format. The core decides from each level
    type's assembly (``Format.result_assembly_problem``; docs/architecture.md): dense levels
    located, compressed and singleton levels appended, hashed ones inserted; not DIA, ELL or
    BCSR, whose levels derive their coordinates from others."""
    return fmt.result_assembly_problem is None


def infer_result_format(result_indices, rhs, format_of):
    """The inferred format of a result indexed by ``result_indices`` for the right side
    ``rhs``; ``format_of(tensor)`` gives an operand's format. The rule is the core's
    (``_core.infer_result_format``, src/notation/result_format.hpp): this builds the core's
    expression of ``rhs``, one variable per operand. Returns a Format."""
    # Only the format matters to the rule; the dtype is any.
    var_of = core_variables(id, lambda t, n: (f"t{n}", format_of(t), "float64", "int64"))
    rhs_in_core = core_expression(rhs, var_of)
    return _core.infer_result_format([v.name for v in result_indices], rhs_in_core)


def check_dense_size(shape, dtype, name):
    """Raise ShapeError when an inferred dense result would exceed ``ct.config.max_dense_bytes``."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes > config.max_dense_bytes:
        raise ShapeError(
            f"the dense result {name} of shape {tuple(shape)} would need {nbytes} bytes, "
            f"more than ct.config.max_dense_bytes ({config.max_dense_bytes}); pass "
            'out_format= with a sparse format, or out_format="dense" to compute it anyway'
        )


def default_sparse_format(order, like=None):
    """A sparse format of ``order`` modes for a result built from entries: ``like`` when it has
    that order and can be assembled, else COO when ``like`` is COO, compressed for a vector, CSR
    for a matrix, CSF beyond."""
    if like is not None and like.order == order and assemblable(like):
        return like
    if order == 0:
        return as_format("dense", 0)
    if like is not None and like == as_format("coo", like.order) and order >= 2:
        return as_format("coo", order)
    return as_format({1: "s", 2: "csr"}.get(order, "csf"), order)
