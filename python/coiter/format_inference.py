"""The result format coiter infers when none is given (API.md §3, "Inferred result format")."""

import math

import numpy as np

from .config import config
from .errors import ShapeError
from .formats import Format, as_format
from .notation import Access, Binary, Literal, Negate, Reduction, accesses


def _is_sparse(fmt):
    return any(level.name != "dense" for level in fmt.levels)


def assemblable(fmt: Format) -> bool:
    """Whether a kernel can compute a result in this format. The core decides from each level
    type's assembly (``Format.result_assembly_problem``; docs/architecture.md): dense levels
    located, compressed and singleton levels appended, hashed ones inserted; not DIA, ELL or
    BCSR, nor a compressed level below a dense one below a compressed one."""
    return fmt.result_assembly_problem is None


def _terms(expr):
    """The product terms of a sum."""
    if isinstance(expr, Binary) and expr.op in ("add", "sub"):
        return _terms(expr.a) + _terms(expr.b)
    if isinstance(expr, Negate):
        return _terms(expr.a)
    return [expr]


def _factors(expr):
    """The factors of a product, or None when ``expr`` is not a single product."""
    if isinstance(expr, Binary) and expr.op == "mul":
        a, b = _factors(expr.a), _factors(expr.b)
        return None if a is None or b is None else a + b
    if isinstance(expr, Negate):
        return _factors(expr.a)
    if isinstance(expr, (Access, Literal)):
        return [expr]
    if isinstance(expr, Reduction) and expr.op == "add":
        return _factors(expr.body)
    return None


def _subexpressions(expr):
    yield expr
    for child in ("a", "b", "body"):
        if hasattr(expr, child):
            yield from _subexpressions(getattr(expr, child))


def _divides_by_unstored_zeros(expr, format_of):
    """Whether a quotient in ``expr`` has a denominator that may be zero where nothing is
    stored (it reads a sparse operand, or is a zero literal): x / 0 and 0 / 0 then fill the
    result with ±inf and NaN wherever nothing is stored, as on dense arrays (API.md §3)."""
    for e in _subexpressions(expr):
        if isinstance(e, Binary) and e.op == "div":
            denominator = list(_subexpressions(e.b))
            if any(isinstance(d, Literal) and d.value == 0 for d in denominator) or any(
                _is_sparse(format_of(a.tensor)) for a in accesses(e.b)
            ):
                return True
    return False


def infer_result_format(result_indices, rhs, format_of):
    """The inferred format of a result indexed by ``result_indices`` for the right side
    ``rhs``; ``format_of(tensor)`` gives an operand's format. Returns a Format."""
    order = len(result_indices)
    operands = accesses(rhs)
    sparse_ops = [a for a in operands if _is_sparse(format_of(a.tensor))]
    result_set = set(result_indices)
    sparse = bool(operands) and len(sparse_ops) == len(operands)
    factors = _factors(rhs)
    if not sparse and factors is not None and sparse_ops:
        access_factors = [f for f in factors if isinstance(f, Access)]
        summed = {v for f in access_factors for v in f.indices} - result_set
        dense_vars = {
            v for f in access_factors if not _is_sparse(format_of(f.tensor)) for v in f.indices
        }
        carriers = [a for a in sparse_ops if result_set <= set(a.indices)]
        sparse = (
            bool(carriers)
            and summed <= dense_vars
            and not any(summed & set(a.indices) for a in sparse_ops)
        )
    if order == 0 or not sparse or _divides_by_unstored_zeros(rhs, format_of):
        return as_format("dense", order)
    carrying = [a for a in sparse_ops if result_set & set(a.indices)]
    formats = {format_of(a.tensor) for a in carrying}
    if len(formats) == 1:
        (fmt,) = formats
        if fmt.order == order and assemblable(fmt):
            return fmt
    if order == 1:
        return as_format("s", 1)
    first = result_indices[0]
    for term in _terms(rhs):
        term_accesses = accesses(term)
        users = [a for a in term_accesses if first in a.indices]
        if not users:
            return as_format("d" + "s" * (order - 1), order)
        for a in users:
            fmt = format_of(a.tensor)
            level = list(fmt.mode_order).index(a.indices.index(first))
            if fmt.levels[level].name == "dense":
                return as_format("d" + "s" * (order - 1), order)
    return as_format("s" * order, order)


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
