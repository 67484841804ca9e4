"""The implementations of Tensor's methods that live above tensor.py: the compiler, the array
operators, NumPy's protocols and the conversions to other libraries. This module is what
tensor.TensorMethods describes; coiter/__init__.py installs it (tensor.install_methods)."""

from .compiler import compile
from .elementwise import binary, elementwise, nonzero
from .indexing import getitem
from .interop_pandas import to_pandas
from .interop_pydata import to_pydata
from .linalg import matmat, matvec, rmatmat, rmatvec
from .numpy_protocols import array_function, array_ufunc
from .operators import arithmetic, dot, matmul, mean, negative, reduce, reshape, run, transpose
from .scipy_interop import to_scipy

__all__ = [
    "compile",
    "run",
    "arithmetic",
    "matmul",
    "negative",
    "dot",
    "transpose",
    "reshape",
    "reduce",
    "mean",
    "binary",
    "elementwise",
    "nonzero",
    "getitem",
    "matvec",
    "rmatvec",
    "matmat",
    "rmatmat",
    "array_ufunc",
    "array_function",
    "to_scipy",
    "to_pydata",
    "to_pandas",
]
