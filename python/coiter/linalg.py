"""Tensors as SciPy linear operators: ``scipy.sparse.linalg.aslinearoperator(T)`` (and ``cg``,
``gmres``, ``eigsh``, ``svds`` given a tensor) call ``T.matvec``, ``T.rmatvec``, ``T.matmat``
and ``T.rmatmat``, which compute ``T @ x`` and ``T.conj().T @ x`` with coiter's kernels and
return NumPy arrays, as LinearOperator expects."""

from typing import Any

import numpy as np

from .compiler import Kernel, KernelPlan
from .conversion import as_tensor
from .errors import ShapeError
from .evaluate import choose_kernel, evaluate
from .parser import parse


def _operand(tensor, x, rows, what):
    if tensor.ndim != 2:
        raise ShapeError(f"{what} needs a matrix, not a tensor of shape {tensor.shape}")
    x = np.asarray(x)
    if x.shape[0] != rows:
        raise ShapeError(f"{what}: the operand's first extent {x.shape[0]} does not match {rows}")
    # The kernels read C-contiguous arrays in place; LinearOperator may pass views.
    return np.ascontiguousarray(x)


# The products as statements. Each call of a solver's matvec runs one of them: the kernel is
# chosen once per (product, matrix format and dtype, operand dtype) and then called straight
# (Kernel's fast path), about 0.02 ms of Python a product where ct.evaluate's lookup spent
# 0.05 ms and the lazy operators' expression building 0.1 ms: at 10,000 rows that was as much
# as the SpMV itself (benchmarks/cg_solve.py).
_PRODUCTS = {
    (False, 1): "y(i) = A(i,j) * x(j)",
    (False, 2): "y(i,k) = A(i,j) * x(j,k)",
    (True, 1): "y(j) = A(i,j) * x(i)",
    (True, 2): "y(j,k) = A(i,j) * x(i,k)",
}
_product_kernels: dict[tuple[Any, ...], Kernel | KernelPlan] = {}


def forget_product_kernels() -> None:
    """Forget the product kernels chosen (ct.clear_cache calls it): the table is replaced, and
    the tensors' own entries, which name the table they came from, no longer count."""
    global _product_kernels
    _product_kernels = {}


def _product(matrix, x, transposed):
    """``matrix @ x`` (or its transpose's) as a NumPy array."""
    # Each tensor keeps the kernels it was multiplied with, by product and operand dtype (its
    # format and dtype never change): hashing its Format for the shared table cost 0.3 us.
    key = (transposed, x.ndim, x.dtype)
    remembered = matrix._products.get(key) if matrix._products is not None else None
    if remembered is not None and remembered[0] is _product_kernels:
        kernel = remembered[1]
    else:
        kernel = _product_kernel(matrix, x, transposed)
        if kernel is None:  # operands converted: not remembered
            return np.asarray(
                evaluate(_PRODUCTS[transposed, x.ndim], A=matrix, x=x, out_format="dense")
            )
        if matrix._products is None:
            matrix._products = {}
        matrix._products[key] = (_product_kernels, kernel)
    if isinstance(kernel, Kernel):
        # The result's values straight from the call: no Tensor around x or the result.
        shape = (matrix.shape[1 if transposed else 0], *x.shape[1:])
        return kernel._values({"A": matrix, "x": x}).reshape(shape)
    return np.asarray(kernel(A=matrix, x=x))


def _product_kernel(matrix, x, transposed):
    """The kernel of the product for the matrix's format and dtype and x's dtype, chosen once
    for all tensors alike; None when the choice converts the operands (it is then not kept)."""
    statement = _PRODUCTS[transposed, x.ndim]
    # (Remembered without statistics: schedule="auto", which choose_kernel applies, runs a
    # sparse matrix times a dense operand as the default schedule on every input.)
    key = (statement, matrix.format, matrix.dtype, x.dtype)
    kernel = _product_kernels.get(key)
    if kernel is None:
        # (Extents were checked by _operand.)
        operands = {"A": matrix, "x": as_tensor(x, "x")}
        assignment, refs = parse(statement)
        chosen = choose_kernel(assignment, refs, operands, "dense", None, None, None)
        kernel, inputs, conversions = chosen[0], chosen[3], chosen[4]
        if inputs is not None or conversions:
            return None
        _product_kernels[key] = kernel
    return kernel


def _apply(matrix, x, transposed=False):
    column = x.ndim == 2 and x.shape[1] == 1  # LinearOperator's column vectors
    operand = x.reshape(-1) if column else x
    y = _product(matrix.evaluate(), operand, transposed)
    return y.reshape(-1, 1) if column else y


def _straight(tensor, x, transposed):
    """A solver's step, ``tensor @ x`` (or its transpose's) with the remembered kernel called
    straight, or None: a contiguous vector of the right extent and a computed matrix whose
    product kernel is remembered skip what _operand, _apply and _product would do for them
    (their checks' Python: 1 us of a 5 us call). Anything else takes the general path."""
    if (
        type(x) is np.ndarray
        and x.ndim == 1
        and tensor._products is not None
        and not tensor._pending
        and tensor.ndim == 2
        and x.shape[0] == tensor.shape[0 if transposed else 1]
        and x.flags.c_contiguous
    ):
        remembered = tensor._products.get((transposed, 1, x.dtype))
        if remembered is not None and remembered[0] is _product_kernels:
            kernel = remembered[1]
            if isinstance(kernel, Kernel):
                return kernel._values({"A": tensor, "x": x})
    return None


def matvec(tensor, x):
    y = _straight(tensor, x, False)
    return y if y is not None else _apply(tensor, _operand(tensor, x, tensor.shape[1], "matvec"))


def rmatvec(tensor, x):
    if tensor.dtype.kind != "c":
        y = _straight(tensor, x, True)
        if y is not None:
            return y
    x = _operand(tensor, x, tensor.shape[0], "rmatvec")
    if tensor.dtype.kind == "c":
        # (A^H x) = conj(A^T conj(x)): the transpose is read in the kernel, no copy of A.
        return np.conj(_apply(tensor, np.conj(x), transposed=True))
    return _apply(tensor, x, transposed=True)


def matmat(tensor, X):
    return matvec(tensor, X)


def rmatmat(tensor, X):
    return rmatvec(tensor, X)
