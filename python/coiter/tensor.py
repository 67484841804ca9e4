"""The tensor type (docs/reference.md, "Tensors"): a format, a shape and the level and value arrays.

A :class:`Tensor` wraps the C++ ``TensorStorage`` of the core, whose buffers may borrow
NumPy memory (zero copy). Everything here is a thin layer: packing, validation and
unpacking happen in C++.

This module sits below the compiler and the array operators (docs/architecture.md, "Python
layering"). The methods that need them (computing a definition, the array operators, NumPy's
protocols, conversions to other libraries) call :class:`TensorMethods`, which
``coiter/__init__.py`` installs from tensor_methods.py: a seam, not an import, so the modules
above can build on tensors without the graph of imports running back up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol, SupportsInt, TypeAlias, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _core, cuda_libraries
from .auto_statistics import StorageStatistics
from .config import config
from .display import tensor_html
from .dtypes import value_dtype
from .errors import OutOfRange, ShapeError
from .formats import (
    Format,
    FormatLike,
    FormatState,
    LevelType,
    as_format,
    format_from_state,
    format_state,
    is_all_dense,
)
from .notation import (
    Access,
    Assignment,
    IndexExpr,
    _wrap,
    accesses,
    check_depth,
    check_extents,
    index_key,
    map_tensors,
)
from .progress import progress
from .schedule import Schedule, schedule_text
from .shapes import normalize_axes

# The modes an axis argument names, as NumPy takes them: one, several, or all (None).
Axis: TypeAlias = int | Sequence[int] | None


class PendingStorage(Protocol):
    """What an operator's result holds until it is computed (operators._Placeholder): its
    shape, dtype and format, known at once."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def format(self) -> Format: ...


class PendingOperator(Protocol):
    """The definition of an operator's result not computed yet (operators.LazyDefinition)."""

    def assignment(self, tensor: Tensor) -> Assignment: ...
    def text(self) -> str: ...


class DefinitionKernel(Protocol):
    """The kernel compiled for a tensor's definition (compiler.Kernel): calling it recomputes
    the tensor."""

    def __call__(self) -> Tensor: ...


class TensorMethods(Protocol):
    """What Tensor's methods call above this module (tensor_methods.py gathers them): the
    compiler, the array operators and NumPy's protocols, and conversions to other libraries."""

    def compile(self, stmt: Tensor) -> DefinitionKernel: ...  # compiler: sets stmt._kernel
    def run(self, tensor: Tensor) -> _core.TensorStorage: ...  # operators: an operator's result
    def arithmetic(self, op: str, a: object, b: object) -> Tensor: ...
    def matmul(self, a: object, b: object) -> Tensor: ...
    def negative(self, a: Tensor) -> Tensor: ...
    def dot(self, a: object, b: object) -> Tensor: ...
    def transpose(self, tensor: Tensor, axes: Sequence[int] | None = None) -> Tensor: ...
    def reshape(self, tensor: Tensor, shape: int | Sequence[int]) -> Tensor: ...
    def reduce(
        self,
        op: str,
        tensor: Tensor,
        axis: Axis = None,
        keepdims: bool = False,
        dtype: DTypeLike | None = None,
    ) -> Tensor: ...
    def mean(
        self,
        tensor: Tensor,
        axis: Axis = None,
        keepdims: bool = False,
        dtype: DTypeLike | None = None,
    ) -> Tensor: ...
    def binary(self, fn: Callable[..., Any], a: object, b: object) -> Tensor: ...
    def elementwise(self, fn: Callable[..., Any], *operands: object) -> Tensor: ...
    def nonzero(self, tensor: Tensor) -> tuple[NDArray[np.int64], ...]: ...
    def getitem(self, tensor: Tensor, key: Any) -> Any: ...
    def matvec(self, tensor: Tensor, x: ArrayLike) -> NDArray[Any]: ...
    def rmatvec(self, tensor: Tensor, x: ArrayLike) -> NDArray[Any]: ...
    def matmat(self, tensor: Tensor, X: ArrayLike) -> NDArray[Any]: ...
    def rmatmat(self, tensor: Tensor, X: ArrayLike) -> NDArray[Any]: ...
    def array_ufunc(
        self, ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any: ...
    def array_function(
        self,
        func: Callable[..., Any],
        types: Collection[type],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any: ...
    def to_scipy(self, tensor: Tensor, format: str | None = None) -> Any: ...
    def to_pydata(self, tensor: Tensor, kind: str = "coo") -> Any: ...
    def to_pandas(self, tensor: Tensor, index: Any = None, columns: Any = None) -> Any: ...


def install_methods(methods: TensorMethods) -> None:
    """Give Tensor the implementations of its methods above this module (coiter/__init__.py
    calls it once, with tensor_methods)."""
    Tensor._methods = methods


class Level:
    """One level of a tensor: its type, its arrays (NumPy views) and its parameters.

    ``Tensor.levels`` makes them. Arrays and parameters are also attributes: ``level.pos``,
    ``level.crd``, ``level.offset``, ``level.size`` (a dense level's extent or a hashed level's
    bucket count), ...

    Attributes
    ----------
    type : LevelType
        The level's type (``ct.compressed``, ...).
    arrays : dict of str to numpy.ndarray
        The level's arrays by name, views of the tensor's memory.
    parameters : dict of str to int
        The level's scalar parameters by name.
    """

    def __init__(
        self, level_type: LevelType, arrays: dict[str, NDArray[Any]], parameters: dict[str, int]
    ) -> None:
        self.type = level_type
        self.arrays = arrays
        self.parameters = parameters

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not regular attributes.
        if name in ("arrays", "parameters"):
            raise AttributeError(name)
        if name in self.arrays:
            return self.arrays[name]
        if name in self.parameters:
            return self.parameters[name]
        raise AttributeError(
            f"{self.type.name} level has no array or parameter {name!r} "
            f"(it has {sorted(self.arrays) + sorted(self.parameters)})"
        )

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in self.parameters.items()]
        parts += [f"{k}={np.array2string(v, threshold=8)}" for k, v in self.arrays.items()]
        return f"Level({self.type!r}{', ' if parts else ''}{', '.join(parts)})"


class Tensor:
    """A tensor stored in a format: its shape, dtype, format, and level and value arrays.

    Create one with :func:`coiter.asarray`, :func:`coiter.zeros`, :func:`coiter.from_coords`,
    :func:`coiter.random` or :func:`coiter.read`; kernels and operators return them. A tensor
    is also an array (docs/arrays.md): operators (``A + B``, ``A @ x``), NumPy's ufuncs and
    functions, indexing and SciPy's solvers work on it, lazily and fused where they can.

    Assigning index notation to a tensor defines it: ``y[i] = A[i, j] * x[j]`` is computed when
    ``y``'s data is first needed, or by :meth:`evaluate`.
    """

    # The implementations above this module (see TensorMethods), installed by install_methods.
    _methods: ClassVar[TensorMethods]

    def __init__(
        self, storage: _core.TensorStorage | PendingStorage, name: str | None = None
    ) -> None:
        self._data = storage
        # Shape, dtype and format never change (a computed definition or out= fills in storage of
        # the same kind), and the array operators read them often: read from the core once.
        self._shape = tuple(storage.shape)
        self._dtype = np.dtype(storage.dtype)
        self._format = storage.format
        self.name = name
        # The Assignment last assigned, kept once computed: ct.compile(y) compiles it
        # (docs/reference.md, "Index notation").
        self._assigned: Assignment | None = None  # the Assignment of y[i] = ... (see _definition)
        self._pending = False  # whether the definition is still to be computed (lazy evaluation)
        # the kernel that computes the definition, compiled once
        self._kernel: DefinitionKernel | None = None
        # the schedule its definitions are compiled with (docs/reference.md, "Schedules")
        self._schedule: Schedule | str | None = None
        # An operator's result not computed yet (operators.LazyDefinition); its _data is then a
        # placeholder that knows only the shape, dtype and format.
        self._lazy: PendingOperator | None = None
        # its statistics as schedule="auto" read them, for the storage read (autosched/database.py)
        self._statistics: StorageStatistics | None = None
        # The array a kernel's or an operator's operand was wrapped from (conversion.as_tensor,
        # as_operand): a NumPy array, or a SciPy matrix's indptr. schedule="auto" keeps the
        # statistics read for it (auto_keys.py), as the next call wraps it in another tensor.
        self._source: np.ndarray | None = None
        # transposes sharing this tensor's arrays (operators.transpose)
        self._views: dict[tuple[int, ...], tuple[_core.TensorStorage, Tensor]] | None = None
        # the kernels of T @ x and T.T @ x that T.matvec and T.rmatvec chose (linalg.py)
        self._products: dict[tuple[Any, ...], Any] | None = None

    @property
    def _definition(self) -> Assignment | None:
        """The definition last assigned (``y[i] = ...``) or an operator's, built when asked:
        an operator result keeps no assignment naming itself, a reference cycle that would
        leave its memory to the garbage collector instead of freeing it on its last use (the
        kernels' result memory is reused only once freed)."""
        if self._assigned is None and self._lazy is not None:
            return self._lazy.assignment(self)
        return self._assigned

    @property
    def _storage(self) -> _core.TensorStorage:
        """The tensor's data, computing a pending definition first."""
        if self._pending:
            self.evaluate()
        return cast(_core.TensorStorage, self._data)  # (computed: no longer a placeholder)

    def _set_storage(self, storage: _core.TensorStorage) -> None:
        self._data = storage
        self._source = None  # (the storage is no longer the one made from it)

    # -- devices (docs/reference.md, "Targets") ----------------------------------------------------
    @property
    def device(self) -> str:
        """The device holding the tensor's arrays: ``"cpu"``, or ``"cuda"`` after
        ``to("cuda")`` and for results of GPU kernels with a device operand."""
        return self._storage.device

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """An all-dense GPU tensor's values, for CuPy, Numba and PyTorch (no copy)."""
        if (
            self.device != "cuda"
            or not is_all_dense(self.format)
            or tuple(self.format.mode_order) != tuple(range(self.ndim))
        ):
            raise AttributeError(
                "__cuda_array_interface__: only all-dense, row-major tensors on a GPU have one"
            )
        address = _core.device_addresses(self._storage)["values"][0]
        return {
            "shape": tuple(self.shape),
            "typestr": self.dtype.str,
            "data": (address, True),
            "version": 3,
            "strides": None,
        }

    def to(self, device: str) -> Tensor:
        """This tensor's data on ``device`` (``"cuda"`` or ``"cpu"``), as a new tensor.

        ``to("cuda")`` copies the arrays to the GPU once (later changes to the host arrays are
        not seen there); GPU kernels then read them without copying, and their results stay on
        the GPU. ``to("cpu")`` copies a GPU result back (reading a result's data on the host
        does so too)."""
        if device not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {device!r} (expected 'cpu' or 'cuda')")
        if device == self.device:
            return self
        if device == "cuda":
            cuda_libraries.prepare()
            return Tensor(_core.to_device(self._storage), self.name)
        return Tensor(_core.to_host(self._storage), self.name)

    # -- index notation (docs/reference.md, "Index notation") --------------------------------------
    def __setitem__(self, key: object, value: object) -> None:
        variables = index_key(key, self.ndim, self._label())
        if variables is None:
            raise TypeError(
                "coiter tensors are assigned with index variables, e.g. y[i] = A[i, j] * x[j]"
            )
        rhs = _wrap(value)
        check_depth(rhs, f"assignment to {self._label()}")
        if any(a.tensor is self for a in accesses(rhs)):
            # y[i] += e (or y[i] = y[i] * 2): the right side reads y as it is now.
            current = Tensor(self._storage, self.name)
            rhs = map_tensors(rhs, lambda t: current if t is self else t)
        self._check_operands(rhs)
        lhs = Access(self, variables)
        check_extents([lhs] + accesses(rhs), lambda t: t.shape)
        if self._lazy is not None:  # an operator's result, defined anew: the placeholder goes
            self._data = self._storage
            self._lazy = None
        self._assigned = Assignment(lhs, rhs)
        self._pending = True
        self._kernel = None

    def schedule(self, schedule: Schedule | str | None) -> Tensor:
        """Compile this tensor's definitions with ``schedule`` (a :class:`coiter.Schedule`, its
        text, ``"default"`` for the compiler's default schedule, or None for the default,
        ``"auto"`` on the CPU: docs/autoscheduling.md); returns the tensor, so
        ``y.schedule(s).evaluate()`` chains."""
        schedule_text(schedule)  # reject a malformed schedule here, not at evaluation
        self._schedule = schedule
        self._kernel = None
        return self

    def _check_operands(self, rhs: IndexExpr) -> None:
        for access in accesses(rhs):
            if not isinstance(access.tensor, Tensor):
                raise TypeError(
                    f"only coiter tensors can be indexed in an expression; wrap "
                    f"{type(access.tensor).__name__} with ct.asarray"
                )

    def evaluate(self) -> Tensor:
        """Compute the pending definition now (it is otherwise computed on first data access)."""
        if not self._pending:
            return self
        if self._lazy is not None and self._schedule is None:
            self._data = self._methods.run(self)
            self._lazy = None  # (releases the operands)
            self._pending = False
            return self
        kernel = self._kernel if self._kernel is not None else self._methods.compile(self)
        kernel()  # (compile kept it in self._kernel)
        self._pending = False
        return self

    @classmethod
    def _from_level_arrays(
        cls,
        format: FormatLike,
        shape: Iterable[SupportsInt],
        index_dtype: DTypeLike,
        arrays: Sequence[Mapping[str, ArrayLike]],
        parameters: Sequence[Mapping[str, int]],
        values: ArrayLike,
        name: str | None = None,
    ) -> Tensor:
        """Rebuild a tensor from its level arrays (validated at once)."""
        shape = tuple(int(e) for e in shape)
        fmt = as_format(format, len(shape))
        index_arrays = [
            {k: np.ascontiguousarray(v, dtype=index_dtype) for k, v in level.items()}
            for level in arrays
        ]
        level_parameters = [{k: int(v) for k, v in level.items()} for level in parameters]
        value_array = np.ascontiguousarray(values, dtype=value_dtype(np.asarray(values).dtype))
        storage = _core.from_arrays(
            fmt,
            list(shape),
            np.dtype(index_dtype).name,
            index_arrays,
            level_parameters,
            value_array.reshape(-1),
        )
        storage.validate()
        return cls(storage, name)

    # -- attributes ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The extent of each mode."""
        return self._shape

    @property
    def ndim(self) -> int:
        """The number of modes (the order)."""
        return len(self._shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the values."""
        return self._dtype

    @property
    def index_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the index arrays (``pos``, ``crd``): int32 or int64."""
        return np.dtype(self._storage.index_dtype)

    @property
    def format(self) -> Format:
        """The storage format."""
        return self._format

    @property
    def nnz(self) -> int:
        """Number of stored entries (explicit zeros included, empty slots excluded)."""
        return self._storage.nnz

    @property
    def values(self) -> NDArray[Any]:
        """The value array, a NumPy view of the tensor's memory."""
        return self._storage.values

    @property
    def levels(self) -> list[Level]:
        """One :class:`Level` per stored level, outermost first, with its arrays as NumPy
        views (a CSR matrix's second level has ``pos`` and ``crd``)."""
        types = self.format.levels
        return [
            Level(t, arrays, params)
            for t, arrays, params in zip(
                types, self._storage.level_arrays, self._storage.level_parameters
            )
        ]

    @property
    def size(self) -> int:
        """The number of elements of the dense tensor, stored or not."""
        return math.prod(self.shape)

    # -- conversions --------------------------------------------------------------------
    def to_numpy(self) -> NDArray[Any]:
        """A new dense NumPy array with the tensor's contents."""
        if is_all_dense(self.format):
            return self.values.reshape(self.shape).copy()
        _core.check_dense_array(
            self.shape, self.dtype.name, f"to_numpy of {self._label()} of shape {self.shape}"
        )
        out = np.zeros(self.shape, dtype=self.dtype)
        self._storage.to_dense(out.reshape(-1))
        return out

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        if copy is False and not is_all_dense(self.format):
            raise ValueError("a sparse tensor cannot be viewed as a NumPy array without a copy")
        if is_all_dense(self.format) and not copy:
            array = self.values.reshape(self.shape)
        else:
            # NumPy and SciPy call this implicitly (np.asarray, sp.csr_array(T)): a sparse
            # tensor is densified only within ct.config.max_dense_bytes; T.to_numpy() is the
            # explicit way beyond it.
            nbytes = self.size * self.dtype.itemsize
            if nbytes > config.max_dense_bytes:
                raise ShapeError(
                    f"np.asarray of the {self.format} {self._label()} of shape {self.shape} "
                    f"would need {nbytes} bytes, more than ct.config.max_dense_bytes "
                    f"({config.max_dense_bytes}); use T.to_scipy() for SciPy, or "
                    "T.to_numpy() to densify it anyway"
                )
            array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def to_scipy(self, format: str | None = None) -> Any:
        """A SciPy sparse array (2-D tensors only): "csr", "csc" or "coo"."""
        return self._methods.to_scipy(self, format)

    def asformat(self, format: FormatLike) -> Tensor:
        """The same tensor stored in another format (self when it already is)."""
        fmt = as_format(format, self.ndim)
        if fmt == self.format:
            return self
        # Conversions that need no sort: CSR <-> CSC by a counting sort, and a coordinate
        # list (COO) of entries that list in order, straight from the arrays.
        converted = self._storage.swap_compressed_modes(fmt)
        if converted is None:
            converted = self._storage.list_as_coordinates(fmt)
        if converted is not None:
            return Tensor(converted, self.name)
        coords, values = self._storage.entries()
        bits = 64 if self.index_dtype == np.int64 else 32
        return pack(
            fmt,
            self.shape,
            [coords[:, m] for m in range(self.ndim)],
            values,
            name=self.name,
            index_bits=bits,
        )

    def copy(self) -> Tensor:
        """A deep copy that owns its memory."""
        return Tensor(self._storage.copy(), self.name)

    def coords(self) -> tuple[NDArray[np.int64], NDArray[Any]]:
        """``(coords, values)``: an ``(nnz, ndim)`` int64 array of the stored entries'
        coordinates (column k holds mode k) in storage order, and their values."""
        return self._storage.entries()

    # -- element access -----------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        variables = index_key(key, self.ndim, self._label())
        if variables is not None:
            return Access(self, variables)
        key = key if isinstance(key, tuple) else (key,)
        if len(key) == self.ndim and all(isinstance(k, (int, np.integer)) for k in key):
            for m, k in enumerate(key):
                if not -self.shape[m] <= k < self.shape[m]:
                    raise OutOfRange(
                        f"index {k} is out of range for mode {m} of {self._label()} "
                        f"(extent {self.shape[m]})"
                    )
            coords = [int(k) + (self.shape[m] if k < 0 else 0) for m, k in enumerate(key)]
            return self._storage.element(coords)
        return self._methods.getitem(self, key)

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the first mode (``T[0]``, ``T[1]``, ...), as NumPy."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for k in range(self.shape[0]):
            yield self[k]

    def _label(self) -> str:
        return f"tensor {self.name!r}" if self.name else "the tensor"

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def _pending_text(self) -> str | None:
        """The definition of a tensor not computed yet, as text; None once computed. (Displays
        show it instead of the data: displaying a tensor must not run its kernel.)"""
        if self._pending and self._lazy is not None:
            return self._lazy.text()
        if self._pending and self._definition is not None:
            return str(self._definition)
        return None

    def __repr__(self) -> str:
        name = f" name={self.name!r}" if self.name else ""
        pending = self._pending_text()
        state = f"nnz={self.nnz}" if pending is None else f"lazy: {pending}"
        return (
            f"<coiter.Tensor{name} shape={self.shape} dtype={self.dtype} format={self.format} "
            f"{state}>"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display: format, shape, dtype, nnz, density, the level arrays and a spy
        plot of a matrix (docs/jupyter.md); a lazy tensor's definition, not computed."""
        return tensor_html(self, self._pending_text())

    # -- the array interface (docs/arrays.md) ----------------------------------------------
    # Operators build lazy index notation (operators.py) computed by fused kernels; functions
    # of the values (ufuncs, comparisons) are computed on the stored entries (elementwise.py).
    __array_priority__ = 20  # NumPy defers binary operators to ours

    def __add__(self, other: object) -> Tensor:
        return self._methods.arithmetic("add", self, other)

    def __radd__(self, other: object) -> Tensor:
        return self._methods.arithmetic("add", other, self)

    def __sub__(self, other: object) -> Tensor:
        return self._methods.arithmetic("sub", self, other)

    def __rsub__(self, other: object) -> Tensor:
        return self._methods.arithmetic("sub", other, self)

    def __mul__(self, other: object) -> Tensor:
        return self._methods.arithmetic("mul", self, other)

    def __rmul__(self, other: object) -> Tensor:
        return self._methods.arithmetic("mul", other, self)

    def __truediv__(self, other: object) -> Tensor:
        return self._methods.arithmetic("div", self, other)

    def __rtruediv__(self, other: object) -> Tensor:
        return self._methods.arithmetic("div", other, self)

    def __matmul__(self, other: object) -> Tensor:
        return self._methods.matmul(self, other)

    def __rmatmul__(self, other: object) -> Tensor:
        return self._methods.matmul(other, self)

    def __neg__(self) -> Tensor:
        return self._methods.negative(self)

    def __pos__(self) -> Tensor:
        return self

    def __floordiv__(self, other: object) -> Tensor:
        return self._methods.binary(np.floor_divide, self, other)

    def __rfloordiv__(self, other: object) -> Tensor:
        return self._methods.binary(np.floor_divide, other, self)

    def __mod__(self, other: object) -> Tensor:
        return self._methods.binary(np.remainder, self, other)

    def __rmod__(self, other: object) -> Tensor:
        return self._methods.binary(np.remainder, other, self)

    def __pow__(self, other: object) -> Tensor:
        if self.dtype == np.bool_ and type(other) is int and other == 2:
            # NumPy's ``array ** 2`` is np.square (a fast path), whose bool loop gives int8
            # where np.power(bool, 2) gives int64.
            return self._methods.elementwise(np.square, self)
        return self._methods.binary(np.power, self, other)

    def __rpow__(self, other: object) -> Tensor:
        return self._methods.binary(np.power, other, self)

    def __abs__(self) -> Tensor:
        return self._methods.elementwise(np.absolute, self)

    def __invert__(self) -> Tensor:
        return self._methods.elementwise(np.invert, self)

    def __and__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_and, self, other)

    def __rand__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_and, other, self)

    def __or__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_or, self, other)

    def __ror__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_or, other, self)

    def __xor__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_xor, self, other)

    def __rxor__(self, other: object) -> Tensor:
        return self._methods.binary(np.bitwise_xor, other, self)

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return self._methods.binary(np.equal, self, other)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return self._methods.binary(np.not_equal, self, other)

    def __lt__(self, other: object) -> Tensor:
        return self._methods.binary(np.less, self, other)

    def __le__(self, other: object) -> Tensor:
        return self._methods.binary(np.less_equal, self, other)

    def __gt__(self, other: object) -> Tensor:
        return self._methods.binary(np.greater, self, other)

    def __ge__(self, other: object) -> Tensor:
        return self._methods.binary(np.greater_equal, self, other)

    # Tensors stay usable as dict keys and in sets, by identity, as before comparisons became
    # elementwise (NumPy and SciPy arrays are unhashable; code that keyed tensors keeps working).
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self.size} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self._scalar())

    def _scalar(self) -> Any:
        """The one element of a size-1 tensor, as a NumPy scalar."""
        if self.size != 1:
            raise TypeError(
                f"only size-1 tensors convert to Python scalars, not shape {self.shape}"
            )
        return self.to_numpy().reshape(-1)[0]

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self.ndim != 0 or self.dtype.kind not in "iub":
            raise TypeError("only 0-d integer tensors can be used as an index")
        return int(self._scalar())

    @property
    def T(self) -> Tensor:
        """The transpose (modes reversed); a CSR matrix's is CSC, sharing its arrays."""
        return self._methods.transpose(self)

    @property
    def mT(self) -> Tensor:
        """The transpose of the last two modes (Array API)."""
        if self.ndim < 2:
            raise ValueError("mT needs at least two modes")
        return self._methods.transpose(
            self, tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2)
        )

    def transpose(self, *axes: Any) -> Tensor:
        """The tensor with its modes permuted: ``T.transpose()``, ``T.transpose(1, 0)`` or
        ``T.transpose((1, 0))``, as NumPy."""
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            return self._methods.transpose(self, axes[0] or None)
        return self._methods.transpose(self, axes or None)

    def reshape(self, *shape: Any) -> Tensor:
        """The tensor with another shape of the same size, as NumPy's (row-major order): a view
        of a dense tensor; a sparse tensor's entries packed again."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return self._methods.reshape(self, shape)

    def squeeze(self, axis: Axis = None) -> Tensor:
        """The tensor without its modes of extent 1 (those in ``axis``), as NumPy."""
        axes = (
            [m for m in range(self.ndim) if self.shape[m] == 1]
            if axis is None
            else normalize_axes(axis, self.ndim)
        )
        if any(self.shape[m] != 1 for m in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        return self.reshape(tuple(e for m, e in enumerate(self.shape) if m not in axes))

    def sum(
        self, axis: Axis = None, keepdims: bool = False, dtype: DTypeLike | None = None
    ) -> Tensor:
        """The sum over the modes in ``axis`` (all by default), as NumPy's; lazy, and sparse
        where the tensor is."""
        return self._methods.reduce("add", self, axis, keepdims, dtype)

    def max(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """The maximum over the modes in ``axis``; the unstored zeros count."""
        return self._methods.reduce("max", self, axis, keepdims)

    def min(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """The minimum over the modes in ``axis``; the unstored zeros count."""
        return self._methods.reduce("min", self, axis, keepdims)

    def mean(
        self, axis: Axis = None, keepdims: bool = False, dtype: DTypeLike | None = None
    ) -> Tensor:
        """The mean over the modes in ``axis``, the unstored zeros counted, as NumPy's."""
        return self._methods.mean(self, axis, keepdims, dtype)

    def any(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """Whether any element over the modes in ``axis`` is nonzero."""
        return self._methods.reduce("max", self != 0, axis, keepdims)

    def all(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """Whether every element over the modes in ``axis`` (unstored ones too) is nonzero."""
        return self._methods.reduce("min", self != 0, axis, keepdims)

    def dot(self, other: object) -> Any:
        """SciPy's ``A.dot(B)``, which is ``A @ B``, except that a matrix times a NumPy array is
        computed at once and returned as a NumPy array, as SciPy's sparse arrays do: SciPy's
        ``aslinearoperator(T)`` (and every solver given ``T``) calls ``T.dot(X)`` for each product,
        and the lazy ``T @ X`` would add building its expression to each (``T @ x`` still fuses)."""
        if self.ndim == 2 and isinstance(other, np.ndarray) and other.ndim in (1, 2):
            return self.matmat(other)
        return self._methods.dot(self, other)

    def astype(self, dtype: DTypeLike, copy: bool = True) -> Tensor:
        """The tensor with values converted to ``dtype`` (same structure); ``self`` when the
        dtype is already ``dtype`` and ``copy`` is False."""
        dtype = value_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return self._methods.elementwise(lambda v: v.astype(dtype), self)

    def conj(self) -> Tensor:
        """The complex conjugate (the tensor itself for real dtypes, as NumPy's view)."""
        return self._methods.elementwise(np.conjugate, self) if self.dtype.kind == "c" else self

    conjugate = conj

    @property
    def real(self) -> Tensor:
        """The real part (the tensor itself for real dtypes)."""
        return self._methods.elementwise(np.real, self) if self.dtype.kind == "c" else self

    @property
    def imag(self) -> Tensor:
        """The imaginary part (zeros for real dtypes)."""
        return self._methods.elementwise(np.imag, self)

    def nonzero(self) -> tuple[NDArray[np.int64], ...]:
        """The coordinates of the nonzero entries, one array per mode, in row-major order
        (NumPy's ``nonzero``)."""
        return self._methods.nonzero(self)

    def count_nonzero(self) -> int:
        """The number of stored entries that are not zero."""
        return int(np.count_nonzero(self._canonical_values()))

    def _canonical_values(self) -> NDArray[Any]:
        return canonical(self).values

    # SciPy's spellings
    def multiply(self, other: object) -> Tensor:
        """Elementwise product (SciPy's ``A.multiply(B)``)."""
        return self * other

    # SciPy's conversions, with SciPy's signatures: SciPy's constructors call them on any
    # object issparse accepts (scipy_interop registers Tensor), so sp.coo_array(T),
    # sp.lil_array(T), ... convert through to_scipy instead of np.asarray (a dense copy).
    def tocsr(self, copy: bool = False) -> Any:
        """A SciPy ``csr_array`` (matrices only)."""
        return _copied(self.to_scipy("csr"), copy)

    def tocsc(self, copy: bool = False) -> Any:
        """A SciPy ``csc_array`` (matrices only)."""
        return _copied(self.to_scipy("csc"), copy)

    def tocoo(self, copy: bool = False) -> Any:
        """A SciPy ``coo_array`` (matrices only)."""
        return _copied(self.to_scipy("coo"), copy)

    def tobsr(self, blocksize: tuple[int, int] | None = None, copy: bool = False) -> Any:
        """A SciPy ``bsr_array`` (matrices only)."""
        return self.to_scipy("csr").tobsr(blocksize=blocksize)

    def todia(self, copy: bool = False) -> Any:
        """A SciPy ``dia_array`` (matrices only)."""
        return self.to_scipy("coo").todia()

    def tolil(self, copy: bool = False) -> Any:
        """A SciPy ``lil_array`` (matrices only)."""
        return self.to_scipy("csr").tolil()

    def todok(self, copy: bool = False) -> Any:
        """A SciPy ``dok_array`` (matrices only)."""
        return self.to_scipy("coo").todok()

    # SciPy's (and pydata/sparse GCXS's) names of a CSR or CSC matrix's arrays. SciPy's
    # compressed constructors read them after ``T.asformat("csr")``: sp.csr_array(T) then
    # shares the tensor's arrays, as sp.csr_array(csr) does. Other formats have no indptr
    # or indices (AttributeError, so hasattr() is False).
    @property
    def data(self) -> NDArray[Any]:
        """The stored values (SciPy's and pydata/sparse's name for ``values``)."""
        return self.values

    @property
    def indptr(self) -> NDArray[Any]:
        """A CSR (CSC) matrix's row (column) pointers: its compressed level's ``pos``."""
        pos: NDArray[Any] = self._compressed_level("indptr").pos
        return pos

    @property
    def indices(self) -> NDArray[Any]:
        """A CSR (CSC) matrix's column (row) indices: its compressed level's ``crd``."""
        crd: NDArray[Any] = self._compressed_level("indices").crd
        return crd

    def _compressed_level(self, attribute: str) -> Level:
        if self.ndim != 2 or self.format not in (as_format("csr", 2), as_format("csc", 2)):
            raise AttributeError(
                f"{attribute} belongs to CSR and CSC matrices, not to a tensor of format "
                f"{self.format} and shape {self.shape} (T.to_scipy() converts it)"
            )
        return self.levels[1]

    def toarray(self) -> NDArray[Any]:
        """A dense NumPy array (SciPy's spelling of :meth:`to_numpy`)."""
        return self.to_numpy()

    todense = toarray

    def getnnz(self) -> int:
        """The number of stored entries (SciPy's spelling of :attr:`nnz`)."""
        return self.nnz

    def to_pydata(self, kind: str = "coo") -> Any:
        """A pydata/sparse array: ``"coo"`` or ``"gcxs"`` (a CSR/CSC tensor's arrays shared)."""
        return self._methods.to_pydata(self, kind)

    def to_pandas(self, index: Any = None, columns: Any = None) -> Any:
        """A pandas sparse DataFrame (2-D) or Series (1-D)."""
        return self._methods.to_pandas(self, index, columns)

    # -- SciPy linear algebra: scipy.sparse.linalg.aslinearoperator(T) uses these ------------
    def matvec(self, x: ArrayLike) -> NDArray[Any]:
        """``T @ x`` as a NumPy array (x of shape (n,) or (n, 1), as LinearOperator passes)."""
        return self._methods.matvec(self, x)

    def rmatvec(self, x: ArrayLike) -> NDArray[Any]:
        """``T^H @ x`` as a NumPy array."""
        return self._methods.rmatvec(self, x)

    def matmat(self, X: ArrayLike) -> NDArray[Any]:
        """``T @ X`` as a NumPy array, for a dense matrix ``X``."""
        return self._methods.matmat(self, X)

    def rmatmat(self, X: ArrayLike) -> NDArray[Any]:
        """``T^H @ X`` as a NumPy array, for a dense matrix ``X``."""
        return self._methods.rmatmat(self, X)

    # -- NumPy protocols --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return self._methods.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(
        self,
        func: Callable[..., Any],
        types: Collection[type],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        return self._methods.array_function(func, types, args, kwargs)

    # -- pickling and copies ---------------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        storage = self._storage
        return (
            _rebuild,
            (
                format_state(self.format),
                self.shape,
                self.index_dtype.name,
                storage.level_arrays,
                storage.level_parameters,
                storage.values,
                self.name,
            ),
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        return self.copy()

    def __copy__(self) -> Tensor:
        return self.copy()


def _copied(matrix: Any, copy: bool) -> Any:
    """A SciPy conversion's result, copied when asked (it may share the tensor's arrays)."""
    return matrix.copy() if copy else matrix


def _rebuild(
    state: FormatState,
    shape: Iterable[SupportsInt],
    index_dtype: str,
    arrays: Sequence[Mapping[str, ArrayLike]],
    parameters: Sequence[Mapping[str, int]],
    values: ArrayLike,
    name: str | None,
) -> Tensor:
    """Unpickle a tensor (Tensor.__reduce__)."""
    return Tensor._from_level_arrays(
        format_from_state(state), shape, index_dtype, arrays, parameters, values, name
    )


# Packing fewer entries than this takes well under a second: no progress bar is considered
# (tensors are packed on the array operators' hot paths).
_PACK_PROGRESS_ENTRIES = 1_000_000


def pack(
    fmt: Format,
    shape: Sequence[int],
    columns: Sequence[ArrayLike],
    values: ArrayLike,
    sum_duplicates: bool = True,
    name: str | None = None,
    index_bits: int = 32,
    adopt: bool = False,
    mode_zero_buckets: NDArray[np.int64] | None = None,
) -> Tensor:
    """A tensor packed (in C++) from one coordinate array per mode and the values.

    ``index_bits=32`` gives int32 indices when everything fits, else int64; 64 forces int64.
    ``adopt=True``: the arrays are the caller's to give up (nothing else holds them, as with a
    reader's parsed columns), so the tensor may keep them instead of copies; duplicates are
    then summed and ``index_bits`` is 32. ``mode_zero_buckets`` (with ``adopt``): the entries
    are laid out in the coarse buckets of mode 0 that the sort would scatter them into, each
    starting there (as the core's parser leaves them, ``_core.parse_text_entries``); the sort
    then orders each bucket where it lies.
    """
    coordinates = [
        np.ascontiguousarray(c, dtype=np.int64)
        if np.asarray(c).dtype not in (np.int32, np.int64)
        else np.ascontiguousarray(c)
        for c in columns
    ]
    values = np.ascontiguousarray(values)
    entries = len(values)
    with progress(
        entries, f"packing {fmt}", "entries", small=entries < _PACK_PROGRESS_ENTRIES
    ) as bar:
        extents = [int(e) for e in shape]
        if adopt and (not sum_duplicates or index_bits != 32):
            raise ValueError("pack(adopt=True) sums duplicates at index_bits=32")
        storage = _core.pack(
            fmt, extents, coordinates, values, sum_duplicates, index_bits, adopt, mode_zero_buckets
        )
        bar.update(entries)
    return Tensor(storage, name)


def canonical(tensor: Tensor) -> Tensor:
    """``tensor`` computed, with duplicate coordinates summed (a non-unique COO repacked), so
    a function of its values is a function of its elements."""
    if tensor.format.holds_duplicates():
        coords, values = tensor.coords()
        return pack(
            tensor.format,
            tensor.shape,
            [coords[:, m] for m in range(tensor.ndim)],
            values,
            True,
            tensor.name,
        )
    tensor.evaluate()
    return tensor
