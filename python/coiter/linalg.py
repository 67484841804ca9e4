"""Tensors as SciPy linear operators: ``scipy.sparse.linalg.aslinearoperator(T)`` (and ``cg``,
``gmres``, ``eigsh``, ``svds`` given a tensor) call ``T.matvec``, ``T.rmatvec``, ``T.matmat``
and ``T.rmatmat``, which compute ``T @ x`` and ``T.conj().T @ x`` with coiter's kernels and
return NumPy arrays, as LinearOperator expects."""
import numpy as np

from .errors import ShapeError


def _operand(tensor, x, rows, what):
    if tensor.ndim != 2:
        raise ShapeError(f"{what} needs a matrix, not a tensor of shape {tensor.shape}")
    x = np.asarray(x)
    if x.shape[0] != rows:
        raise ShapeError(f"{what}: the operand's first extent {x.shape[0]} does not match {rows}")
    # The kernels read C-contiguous arrays in place; LinearOperator may pass views.
    return np.ascontiguousarray(x)


def _apply(matrix, x):
    if x.ndim == 2 and x.shape[1] == 1:  # LinearOperator's column vectors
        return np.asarray(matrix @ x.reshape(-1)).reshape(-1, 1)
    return np.asarray(matrix @ x)


def matvec(tensor, x):
    return _apply(tensor, _operand(tensor, x, tensor.shape[1], "matvec"))


def rmatvec(tensor, x):
    x = _operand(tensor, x, tensor.shape[0], "rmatvec")
    if tensor.dtype.kind == "c":
        # (A^H x) = conj(A^T conj(x)): the transpose is fused into the kernel, no copy of A.
        return np.conj(_apply(tensor.T, np.conj(x)))
    return _apply(tensor.T, x)


def matmat(tensor, X):
    return matvec(tensor, X)


def rmatmat(tensor, X):
    return rmatvec(tensor, X)
