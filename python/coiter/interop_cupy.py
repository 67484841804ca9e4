"""GPU arrays from other libraries as GPU tensors without copying (docs/gpu.md, "CuPy"): any
object exporting ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) as a dense tensor, and
``cupyx.scipy.sparse`` CSR, CSC and COO matrices in their own formats. The other way is
``ct.cuda.to_cupy``.

GPU kernels read coordinates unchecked, so a sparse matrix's index arrays are checked on the
GPU when it is adopted (:func:`compressed_problem`, :func:`coo_problem`: array operations
that NumPy runs too, which is how they are tested without a GPU); the core checks that each
address is GPU memory holding the claimed length. The adopted memory stays the producer's:
the tensor keeps the producer's objects alive and must not be changed through them."""

from typing import Any

import numpy as np

from . import _core, cuda_libraries
from .dtypes import value_dtype
from .errors import DeviceError, FormatError
from .formats import FormatLike, as_format
from .tensor import Tensor

_SPARSE_FORMATS = ("csr", "csc", "coo")
# The problems that a copy sorted with duplicates summed (CuPy's sum_duplicates) repairs.
UNSORTED_ROWS = "indices are not sorted and unique within each row"
UNSORTED_ENTRIES = "entries are not sorted by row and column without duplicates"


def is_device_array(obj: Any) -> bool:
    """Whether ``obj`` is GPU memory this module adopts: a ``__cuda_array_interface__``
    exporter or a ``cupyx.scipy.sparse`` CSR/CSC/COO matrix (told by its module, so that
    asking imports nothing)."""
    return hasattr(type(obj), "__cuda_array_interface__") or _is_cupy_sparse(obj)


def _is_cupy_sparse(obj: Any) -> bool:
    return type(obj).__module__.startswith("cupyx.scipy.sparse") and hasattr(obj, "format")


def from_device(
    obj: Any,
    format: FormatLike | None = None,
    dtype: Any = None,
    copy: bool | None = None,
    name: str | None = None,
) -> Tensor:
    """A GPU tensor over ``obj``'s GPU memory (see :func:`coiter.asarray`). Conversions
    (another dtype, non-contiguous or non-canonical input, ``copy=True``) run on the GPU
    through CuPy; another ``format`` goes through the host (a copy each way)."""
    cuda_libraries.prepare()
    status = dict(_core.cuda_status())
    if not status["available"]:
        raise DeviceError(
            f"a GPU array was given, but coiter cannot use the GPU: {status['problem']}"
        )
    if _is_cupy_sparse(obj):
        tensor = _from_cupy_sparse(obj, dtype, copy, name)
    else:
        tensor = _from_dense_interface(obj, dtype, copy, name)
    if format is None or as_format(format, tensor.ndim) == tensor.format:
        return tensor
    if copy is False:
        raise ValueError(
            f"copy=False, but converting a GPU {tensor.format} array to {format} needs a copy"
        )
    return tensor.asformat(format).to("cuda")


def _cupy() -> Any:
    try:
        import cupy
    except ImportError as e:
        raise DeviceError(
            "converting this GPU array (its dtype, layout or order) needs CuPy"
        ) from e
    return cupy


def _synchronized(interface: dict[str, Any]) -> dict[str, Any]:
    """``interface``, after the work its producer queued on the stream it names is done
    (coiter's kernels run on the legacy default stream, which waits only for blocking streams)."""
    stream = interface.get("stream")
    if stream not in (None, 1, 2):  # 1, 2: the legacy and per-thread default streams
        _core.cuda_synchronize_stream(int(stream))
    return interface


def _array(interface: dict[str, Any], what: str) -> tuple[int, int, str]:
    """(address, length, dtype name) of a one-dimensional or C-contiguous interface."""
    dtype = np.dtype(interface["typestr"])
    if not dtype.isnative:
        raise FormatError(f"{what} is not in the host's byte order")
    if interface.get("mask") is not None:
        raise FormatError(f"{what} has a mask; coiter reads plain arrays")
    length = int(np.prod(interface["shape"], dtype=np.int64))
    return int(interface["data"][0]), length, dtype.name


def _is_c_contiguous(interface: dict[str, Any]) -> bool:
    strides = interface.get("strides")
    if strides is None:
        return True
    expected, step = [], np.dtype(interface["typestr"]).itemsize
    for extent in reversed(interface["shape"]):
        expected.append(step)
        step *= extent
    return all(e == 1 or s == x for e, s, x in zip(interface["shape"], strides, reversed(expected)))


def _from_dense_interface(obj: Any, dtype: Any, copy: bool | None, name: str | None) -> Tensor:
    interface = _synchronized(obj.__cuda_array_interface__)
    given = np.dtype(interface["typestr"])
    wanted = value_dtype(given if dtype is None else dtype, name or "GPU array")
    if copy or wanted != given or not _is_c_contiguous(interface):
        if copy is False:
            raise ValueError(
                "copy=False, but this GPU array needs a copy (another dtype or not C-contiguous)"
            )
        cupy = _cupy()
        obj = cupy.array(obj, dtype=wanted, order="C", copy=True)
        interface = obj.__cuda_array_interface__
    shape = [int(n) for n in interface["shape"]]
    fmt = as_format("dense", len(shape))
    wide = any(n > np.iinfo(np.int32).max for n in shape)
    storage = _core.adopt_device_arrays(
        fmt,
        shape,
        "int64" if wide else "int32",
        [{} for _ in shape],
        [{"size": n} for n in shape],
        _array(interface, "the array"),
        obj,
    )
    return Tensor(storage, name)


def _flags_of(checks: list[Any]) -> list[bool]:
    """The host's view of 0-d boolean arrays (one transfer for all of them on a GPU)."""
    first = checks[0]
    stacked = type(first).__module__.split(".")[0] == "cupy"
    if stacked:
        import cupy

        return [bool(v) for v in cupy.stack(checks).tolist()]
    return [bool(v) for v in checks]


def compressed_problem(xp: Any, pos: Any, crd: Any, segments: int, extent: int) -> str | None:
    """What is wrong with a compressed level (``pos`` of ``segments + 1`` offsets, ``crd``
    coordinates below ``extent``, strictly increasing in each segment), or None. ``xp`` is the
    array module of the arrays (NumPy or CuPy): the checks run where the arrays are, and
    corrupted offsets cannot make the check itself index out of bounds."""
    if pos.ndim != 1 or pos.shape[0] != segments + 1:
        return f"indptr has {pos.shape[0]} entries; {segments + 1} expected"
    if crd.ndim != 1:
        return "indices must be one-dimensional"
    nnz = crd.shape[0]
    if nnz == 0:
        checks = [xp.any(pos != 0)]
        return "indptr is not all 0 for a matrix without entries" if _flags_of(checks)[0] else None
    starts = xp.zeros(nnz + 1, dtype=bool)
    starts[xp.clip(pos, 0, nnz)] = True  # positions where a segment begins
    increasing = crd[1:] > crd[:-1]
    checks = [
        pos[0] != 0,
        xp.any(pos[1:] < pos[:-1]),
        pos[-1] != nnz,
        xp.any((crd < 0) | (crd >= extent)),
        xp.any(~(increasing | starts[1:nnz])),
    ]
    messages = [
        "indptr[0] is not 0",
        "indptr decreases",
        f"indptr[-1] is not the number of stored entries ({nnz})",
        f"an index is outside [0, {extent})",
        UNSORTED_ROWS,
    ]
    return next((m for m, bad in zip(messages, _flags_of(checks)) if bad), None)


def coo_problem(xp: Any, row: Any, col: Any, shape: tuple[int, int]) -> str | None:
    """What is wrong with COO coordinates for coiter's COO format (in bounds, sorted by row
    and then column, no duplicates), or None; ``xp`` as for :func:`compressed_problem`."""
    if row.ndim != 1 or col.shape != row.shape:
        return "row and col must be one-dimensional and of one length"
    if row.shape[0] == 0:
        return None
    after = (row[1:] > row[:-1]) | ((row[1:] == row[:-1]) & (col[1:] > col[:-1]))
    checks = [
        xp.any((row < 0) | (row >= shape[0])),
        xp.any((col < 0) | (col >= shape[1])),
        xp.any(~after),
    ]
    messages = [
        f"a row index is outside [0, {shape[0]})",
        f"a column index is outside [0, {shape[1]})",
        UNSORTED_ENTRIES,
    ]
    return next((m for m, bad in zip(messages, _flags_of(checks)) if bad), None)


def _from_cupy_sparse(matrix: Any, dtype: Any, copy: bool | None, name: str | None) -> Tensor:
    cupy = _cupy()
    kind = matrix.format
    if kind not in _SPARSE_FORMATS:
        raise FormatError(f"cupyx.scipy.sparse {kind} matrices are not read (csr, csc and coo are)")
    wanted = value_dtype(matrix.dtype if dtype is None else dtype, name or f"CuPy {kind} matrix")
    copied = wanted != matrix.dtype or bool(copy)
    if wanted != matrix.dtype:
        if copy is False:
            raise ValueError(
                f"copy=False, but converting a CuPy {kind} matrix to {wanted} needs a copy"
            )
        matrix = matrix.astype(wanted)  # (a copy)
    elif copy:
        matrix = matrix.copy()
    problem = _problem(cupy, matrix)
    if problem in (UNSORTED_ROWS, UNSORTED_ENTRIES) and copy is not False:
        if not copied:  # sum_duplicates sorts and sums in place: never in the caller's matrix
            matrix = matrix.copy()
        matrix.sum_duplicates()
        problem = _problem(cupy, matrix)
    if problem is not None:
        raise FormatError(f"the CuPy {kind} matrix is malformed: {problem}")
    index = matrix.row if kind == "coo" else matrix.indices
    index_dtype = np.dtype(index.dtype).name
    shape = [int(n) for n in matrix.shape]
    entries = _array(_synchronized(matrix.data.__cuda_array_interface__), "data")
    if kind == "coo":
        pos = cupy.asarray([0, matrix.nnz], dtype=index.dtype)
        arrays = [
            {
                "pos": _array(pos.__cuda_array_interface__, "pos"),
                "crd": _array(matrix.row.__cuda_array_interface__, "row"),
            },
            {"crd": _array(matrix.col.__cuda_array_interface__, "col")},
        ]
        storage = _core.adopt_device_arrays(
            as_format("coo", 2), shape, index_dtype, arrays, [{}, {}], entries, (matrix, pos)
        )
        return Tensor(storage, name)
    outer = shape[0] if kind == "csr" else shape[1]
    arrays = [
        {},
        {
            "pos": _array(matrix.indptr.__cuda_array_interface__, "indptr"),
            "crd": _array(matrix.indices.__cuda_array_interface__, "indices"),
        },
    ]
    storage = _core.adopt_device_arrays(
        as_format(kind, 2), shape, index_dtype, arrays, [{"size": outer}, {}], entries, matrix
    )
    return Tensor(storage, name)


def _problem(cupy: Any, matrix: Any) -> str | None:
    """What keeps a CuPy sparse matrix from being read as it is, or None."""
    m, n = matrix.shape
    index = matrix.row if matrix.format == "coo" else matrix.indices
    if matrix.data.ndim != 1 or matrix.data.shape[0] != index.shape[0]:
        return f"data holds {matrix.data.shape[0]} values for {index.shape[0]} indices"
    if matrix.format == "coo":
        if matrix.row.dtype != matrix.col.dtype:
            return "row and col differ in dtype"
        return coo_problem(cupy, matrix.row, matrix.col, (m, n))
    if matrix.indptr.dtype != matrix.indices.dtype:
        return "indptr and indices differ in dtype"
    segments, extent = (m, n) if matrix.format == "csr" else (n, m)
    return compressed_problem(cupy, matrix.indptr, matrix.indices, segments, extent)
