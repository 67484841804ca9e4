"""Converting objects to tensors: ``ct.asarray`` (docs/reference.md, "Tensors") dispatching on what
it is given, and the fast paths of kernel calls and array operators for their operands."""

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from . import _core
from .creation import from_coords, from_dense
from .dtypes import value_dtype
from .errors import SignatureError
from .formats import FormatLike, as_format
from .interop_cupy import from_device, is_device_array
from .interop_pandas import from_pandas, is_pandas
from .interop_pydata import from_pydata, is_pydata
from .scipy_interop import SCIPY_IN_PLACE, from_scipy
from .tensor import Tensor


def asarray(
    obj: Any,
    format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    copy: bool | None = None,
    name: str | None = None,
) -> Tensor:
    """Convert ``obj`` to a :class:`Tensor`, without copying where its memory can be shared.

    Parameters
    ----------
    obj : array_like, scipy.sparse array or matrix, GPU array, or Tensor
        A NumPy array, a SciPy sparse array or matrix (any format), a pydata/sparse COO or
        GCXS array, a pandas DataFrame or Series (sparse ones keep their sparsity), a scalar,
        a nested list, a tensor, or GPU memory: a CuPy array (any ``__cuda_array_interface__``
        exporter) or a ``cupyx.scipy.sparse`` CSR, CSC or COO matrix, which become GPU
        tensors sharing that memory (docs/gpu.md, "CuPy").
    format : Format, str or None
        Target format; by default NumPy input becomes dense and SciPy input keeps its own
        format (csr, csc, coo, bcsr for bsr, dia).
    dtype : dtype or None
        Value dtype; by default the input's.
    copy : bool or None
        ``True`` always copies; ``False`` raises ``ValueError`` when a copy is needed;
        ``None`` copies only when needed. C-contiguous NumPy arrays into dense tensors and
        canonical SciPy CSR/CSC/BSR into their own format are wrapped without copying, and
        so are C-contiguous GPU arrays and canonical CuPy CSR/CSC/COO matrices.
    name : str or None
        The tensor's name, used in error messages and as a kernel input name.

    Returns
    -------
    Tensor
        Sharing ``obj``'s memory where it can (and keeping ``obj`` alive), else a new tensor.
        Non-canonical SciPy input (unsorted, duplicates) is packed: sorted, duplicates summed.

    Raises
    ------
    ValueError
        If ``copy=False`` and a copy is needed.
    FormatError
        If ``format`` is malformed or the data does not fit it.
    TypeError
        If the dtype is not supported.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.random_array((4, 5), density=0.5, format="csr", random_state=0)
    >>> A = ct.asarray(m)
    >>> A.format, np.shares_memory(A.values, m.data)
    (Format('ds'), True)
    >>> ct.asarray(m, format="coo").nnz == m.nnz
    True
    """
    if isinstance(obj, Tensor):
        return _convert_tensor(obj, format, dtype, copy, name)
    if sp.issparse(obj):
        return from_scipy(obj, format, dtype, copy, name)
    if is_pydata(obj):
        if copy is False:
            raise ValueError("copy=False: a pydata/sparse array is converted, not wrapped")
        return from_pydata(obj, format, dtype, name)
    if is_pandas(obj):
        return from_pandas(obj, format, dtype, copy, name)
    if is_device_array(obj):
        return from_device(obj, format, dtype, copy, name)
    return from_dense(obj, format, dtype, copy, name)


def _convert_tensor(
    tensor: Tensor,
    format: FormatLike | None,
    dtype: DTypeLike | None,
    copy: bool | None,
    name: str | None,
) -> Tensor:
    fmt = tensor.format if format is None else as_format(format, tensor.ndim)
    dtype = tensor.dtype if dtype is None else value_dtype(dtype)
    same = fmt == tensor.format and dtype == tensor.dtype
    if same and not copy:
        return tensor if name is None or name == tensor.name else Tensor(tensor._storage, name)
    if copy is False:
        raise ValueError(
            f"copy=False, but converting {tensor.format}/{tensor.dtype} to "
            f"{fmt}/{dtype} needs a copy"
        )
    result = tensor.asformat(fmt)
    if result is tensor:
        result = tensor.copy()
    if dtype != tensor.dtype:
        coords, values = result.coords()
        result = from_coords(coords, values.astype(dtype), tensor.shape, fmt)
    result.name = name or tensor.name
    return result


def as_tensor(value: Any, name: str | None = None) -> Tensor:
    """``value`` if it is a coiter tensor, else ``ct.asarray(value, name=name)``: an operand
    of the kernel call being made (nothing runs between this and the call)."""
    if isinstance(value, Tensor):
        return value
    if type(value) is np.ndarray:
        try:  # read in place, as asarray would, without its Python
            tensor = Tensor(_core.wrap_dense(value), name)
            tensor._source = value  # (_wrapped inline: a call of it more on every kernel call)
            return tensor
        except SignatureError:
            pass  # it needs converting: asarray does it, or says why it cannot
    elif isinstance(value, SCIPY_IN_PLACE):
        # (what asarray calls)
        return _wrapped(value, from_scipy(value, name=name, for_kernel_call=True))
    return _wrapped(value, asarray(value, name=name))


def _wrapped(value: Any, tensor: Tensor) -> Tensor:
    """``tensor``, made from ``value`` for a call, knowing its source array (Tensor._source):
    ``value`` if it is a NumPy array, else its ``indptr`` if it is a SciPy matrix with one
    (CSR, CSC, BSR: the array that holds its nonzeros and row lengths)."""
    source = value if type(value) is np.ndarray else getattr(value, "indptr", None)
    if type(source) is np.ndarray:
        tensor._source = source
    return tensor


def as_operand(value: object) -> Any:
    """A Tensor for a tensor-like operand, the Python scalar for a scalar, NotImplemented for
    anything else (so Python tries the other operand's method)."""
    if isinstance(value, Tensor):
        return value
    # (Arrays before scalars: `T @ x` in a solver's loop should not pay for the Number ABC's
    # isinstance, a microsecond.)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value.item()
        return as_tensor(value)  # wrapped in place when it can be, without asarray's Python
    # (numbers.Number, which NumPy's scalars register with, is outside NumPy's annotations)
    if isinstance(value, (bool, np.bool_, numbers.Number)) and np.ndim(value) == 0:  # type: ignore[arg-type]
        return value.item() if isinstance(value, np.generic) else value
    if isinstance(value, (list, tuple)) or sp.issparse(value):
        return _wrapped(value, asarray(value))
    return NotImplemented
