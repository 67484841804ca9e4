"""Conversions between coiter tensors and SciPy sparse arrays and matrices.

Canonical CSR, CSC and BSR input (sorted indices, no duplicates) is wrapped without
copying; anything else is converted through its coordinates and packed, which sorts and
sums duplicates, so non-canonical input is never misread.
"""

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from . import _core
from .dtypes import value_dtype
from .errors import FormatError, SignatureError
from .formats import Format, FormatLike, as_format, bcsr
from .tensor import Tensor, pack

# The SciPy classes _core.wrap_scipy reads in place (when canonical; COO when 2-D).
SCIPY_IN_PLACE = (
    sp.csr_array,
    sp.csr_matrix,
    sp.csc_array,
    sp.csc_matrix,
    sp.coo_array,
    sp.coo_matrix,
)


def natural_format(matrix):
    """The format docs/reference.md, "Tensors" gives a SciPy input by default."""
    kind = matrix.format
    if kind in ("csr", "csc", "coo", "dia"):
        return as_format(kind, matrix.ndim)
    if kind == "bsr":
        return bcsr(matrix.blocksize)
    return as_format("csr", matrix.ndim)


def _is_canonical(matrix):
    # SciPy caches this flag; computing it once is O(nnz) in C.
    return bool(matrix.has_canonical_format)


def _with_one_index_width(matrix):
    """``matrix``, or a copy of it whose indptr and indices have one width: SciPy allows
    mixed widths (and cannot convert such a matrix itself); coiter uses one per tensor."""
    pos, crd = matrix.indptr, matrix.indices
    if pos.dtype == crd.dtype:
        return matrix
    wide = np.promote_types(pos.dtype, crd.dtype)
    return type(matrix)((matrix.data, crd.astype(wide), pos.astype(wide)), shape=matrix.shape)


def _wrap_compressed(matrix: Any, fmt: Format, dtype: np.dtype[Any], name: str | None) -> Tensor:
    """Wrap a canonical csr/csc/bsr matrix (one index width) without copying (when dtypes allow)."""
    pos, crd, data = matrix.indptr, matrix.indices, matrix.data
    values = data.reshape(-1) if data.dtype == dtype else data.astype(dtype).reshape(-1)
    if matrix.format == "bsr":
        rows, cols = matrix.blocksize
        arrays = [{}, {"pos": pos, "crd": crd}, {}, {}]
        params = [{"size": matrix.shape[0] // rows}, {}, {"size": rows}, {"size": cols}]
    else:
        outer = matrix.shape[0] if matrix.format == "csr" else matrix.shape[1]
        arrays = [{}, {"pos": pos, "crd": crd}]
        params = [{"size": outer}, {}]
    index_dtype = "int32" if pos.dtype == np.int32 else "int64"  # (dtype.name is slow)
    storage = _core.from_arrays(
        fmt, list(matrix.shape), index_dtype, arrays, params, np.ascontiguousarray(values)
    )
    return Tensor(storage, name)


def from_scipy(
    matrix: Any,
    format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    copy: bool | None = None,
    name: str | None = None,
    for_kernel_call: bool = False,
) -> Tensor:
    """A tensor holding a SciPy sparse array or matrix (see :func:`coiter.asarray`).

    ``for_kernel_call``: the tensor is an operand of the kernel call being made, and nothing
    can change its arrays before it starts, so the call need not check them again.
    """
    if format is None and dtype is None and copy is None and isinstance(matrix, SCIPY_IN_PLACE):
        try:  # canonical CSR/CSC as it is: read in place without the Python below
            return Tensor(_core.wrap_scipy(matrix, for_kernel_call), name)
        except SignatureError:
            pass  # it needs converting
    dtype = value_dtype(matrix.dtype if dtype is None else dtype, name or "scipy input")
    fmt = natural_format(matrix) if format is None else as_format(format, matrix.ndim)
    if matrix.format in ("csr", "csc", "bsr"):
        matrix = _with_one_index_width(matrix)
    wrappable = (
        matrix.format in ("csr", "csc", "bsr")
        and fmt == natural_format(matrix)
        and matrix.indices.dtype in (np.int32, np.int64)
        and _is_canonical(matrix)
    )
    if wrappable and not copy and dtype == matrix.dtype:
        return _wrap_compressed(matrix, fmt, dtype, name)
    if copy is False:
        why = (
            "its indices are not canonical (unsorted or duplicated)"
            if wrappable or matrix.format in ("csr", "csc", "bsr") and not _is_canonical(matrix)
            else f"converting {matrix.format} to {fmt} or to {dtype}"
        )
        raise ValueError(f"copy=False, but a copy is needed: {why}")
    if wrappable and dtype == matrix.dtype:  # copy=True of a canonical matrix: copy arrays
        return _wrap_compressed(matrix, fmt, dtype, name).copy()
    coo = matrix.tocoo()
    return pack(
        fmt,
        matrix.shape,
        _coo_coords(coo),
        coo.data.astype(dtype, copy=False),
        name=name,
        index_bits=_index_bits(matrix),
    )


def _coo_coords(coo):
    # SciPy before 1.13 has only row and col.
    return coo.coords if hasattr(coo, "coords") else (coo.row, coo.col)


def _index_bits(matrix):
    """64 when any index array of the SciPy input is int64, else 32: index arrays keep their width
    (docs/reference.md, "Tensors"), and a SciPy matrix may mix widths (COO row and col), of which
    the wider wins. ``tocoo`` may narrow them, so they are read from the input itself."""
    if matrix.format == "coo":
        arrays = _coo_coords(matrix)
    elif matrix.format == "dia":
        arrays = (matrix.offsets,)
    elif matrix.format in ("csr", "csc", "bsr"):
        arrays = (matrix.indptr, matrix.indices)
    else:  # lil, dok: no index arrays to keep
        arrays = ()
    return 64 if any(a.dtype == np.int64 for a in arrays) else 32


def to_scipy(tensor: Tensor, format: str | None = None) -> Any:
    """A SciPy sparse array with the tensor's contents (2-D tensors only)."""
    if tensor.ndim != 2:
        raise FormatError(f"to_scipy needs a 2-D tensor, not order {tensor.ndim}")
    kind = format or _scipy_kind(tensor.format)
    if kind not in ("csr", "csc", "coo"):
        raise FormatError(f"to_scipy: format must be 'csr', 'csc' or 'coo', not {kind!r}")
    if kind in ("csr", "csc"):
        # Converted by coiter, not SciPy: packing refuses a pos array too large for memory
        # (a huge declared shape) with a ShapeError before allocating it.
        converted = tensor.asformat(kind)
        level = converted.levels[1]
        cls = sp.csr_array if kind == "csr" else sp.csc_array
        return cls((converted.values, level.crd, level.pos), shape=tensor.shape)
    coo_format = as_format("coo", 2)
    # A COO tensor's own arrays (shared, as CSR's and CSC's are); entries that list sorted in
    # COO's order, as a COO tensor's arrays written straight from the levels (index width
    # kept, SciPy told they are canonical); other formats' entries as listed.
    if tensor.format == coo_format:
        coo, canonical = tensor, False
    else:
        storage = tensor._storage.list_as_coordinates(coo_format)
        if storage is None:
            coords, values = tensor.coords()
            return sp.coo_array((values, (coords[:, 0], coords[:, 1])), shape=tensor.shape)
        coo, canonical = Tensor(storage), True
    rows, columns = (level.crd for level in coo.levels)
    result = sp.coo_array((coo.values, (rows, columns)), shape=tensor.shape)
    result.has_canonical_format = canonical
    return result


def _scipy_kind(fmt):
    if fmt == as_format("coo", 2):
        return "coo"
    if fmt.name is None and tuple(fmt.mode_order) == (1, 0):
        return "csc"
    return "csr"


def _register_as_scipy_sparse() -> None:
    """Make ``scipy.sparse.issparse(T)`` true for tensors: SciPy's constructors then convert
    them with the tensor's SciPy-named methods (``sp.csr_array(T)`` reads ``T.asformat("csr")``'s
    ``indptr``/``indices``/``data``, ``sp.coo_array(T)`` calls ``T.tocoo()``, ...) instead of
    ``np.asarray(T)``, a dense copy. ``issparse`` is ``isinstance(x, SparseABC)``, an ABC that
    SciPy 1.15 added for this; older SciPy has no such hook and tensors stay unregistered
    (SciPy's constructors then densify within ``ct.config.max_dense_bytes``)."""
    try:
        from scipy._lib._sparse import SparseABC
    except ImportError:
        return
    SparseABC.register(Tensor)


_register_as_scipy_sparse()
