"""Tensors as SciPy linear operators: ``scipy.sparse.linalg.aslinearoperator(T)`` (and ``cg``,
``gmres``, ``eigsh``, ``svds`` given a tensor) call ``T.matvec``, ``T.rmatvec``, ``T.matmat``
and ``T.rmatmat``, which compute ``T @ x`` and ``T.conj().T @ x`` with coiter's kernels and
return NumPy arrays, as LinearOperator expects."""

import numpy as np

from .errors import ShapeError
from .evaluate import evaluate


def _operand(tensor, x, rows, what):
    if tensor.ndim != 2:
        raise ShapeError(f"{what} needs a matrix, not a tensor of shape {tensor.shape}")
    x = np.asarray(x)
    if x.shape[0] != rows:
        raise ShapeError(f"{what}: the operand's first extent {x.shape[0]} does not match {rows}")
    # The kernels read C-contiguous arrays in place; LinearOperator may pass views.
    return np.ascontiguousarray(x)


# The products as statements: ct.evaluate remembers the kernel it chose for each statement and
# operand formats, so a solver's calls cost the kernel call and a table lookup (the lazy
# operators would also build an expression each time: about 0.1 ms more per call).
_PRODUCTS = {
    (False, 1): "y(i) = A(i,j) * x(j)",
    (False, 2): "y(i,k) = A(i,j) * x(j,k)",
    (True, 1): "y(j) = A(i,j) * x(i)",
    (True, 2): "y(j,k) = A(i,j) * x(i,k)",
}


def _apply(matrix, x, transposed=False):
    column = x.ndim == 2 and x.shape[1] == 1  # LinearOperator's column vectors
    operand = x.reshape(-1) if column else x
    y = np.asarray(
        evaluate(
            _PRODUCTS[transposed, operand.ndim], A=matrix.evaluate(), x=operand, out_format="dense"
        )
    )
    return y.reshape(-1, 1) if column else y


def matvec(tensor, x):
    return _apply(tensor, _operand(tensor, x, tensor.shape[1], "matvec"))


def rmatvec(tensor, x):
    x = _operand(tensor, x, tensor.shape[0], "rmatvec")
    if tensor.dtype.kind == "c":
        # (A^H x) = conj(A^T conj(x)): the transpose is read in the kernel, no copy of A.
        return np.conj(_apply(tensor, np.conj(x), transposed=True))
    return _apply(tensor, x, transposed=True)


def matmat(tensor, X):
    return matvec(tensor, X)


def rmatmat(tensor, X):
    return rmatvec(tensor, X)
