"""The tensor type (API.md §2): a format, a shape and the level and value arrays.

A :class:`Tensor` wraps the C++ ``TensorStorage`` of the core, whose buffers may borrow
NumPy memory (zero copy). Everything here is a thin layer: packing, validation and
unpacking happen in C++.
"""
import math

import numpy as np

from . import _core
from .dtypes import value_dtype
from .formats import as_format, is_all_dense


class Level:
    """One level of a tensor: its type and its arrays (NumPy views) and parameters.

    Arrays and parameters are also attributes: ``level.pos``, ``level.crd``,
    ``level.offset``, ``level.size`` (dense size or hashed bucket count), ...
    """

    def __init__(self, level_type, arrays, parameters):
        self.type = level_type
        self.arrays = arrays
        self.parameters = parameters

    def __getattr__(self, name):
        # Only called for names that are not regular attributes.
        if name in ("arrays", "parameters"):
            raise AttributeError(name)
        if name in self.arrays:
            return self.arrays[name]
        if name in self.parameters:
            return self.parameters[name]
        raise AttributeError(f"{self.type.name} level has no array or parameter {name!r} "
                             f"(it has {sorted(self.arrays) + sorted(self.parameters)})")

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in self.parameters.items()]
        parts += [f"{k}={np.array2string(v, threshold=8)}" for k, v in self.arrays.items()]
        return f"Level({self.type!r}{', ' if parts else ''}{', '.join(parts)})"


class Tensor:
    """A tensor stored in a format. Create one with :func:`coiter.asarray`,
    :func:`coiter.zeros`, :func:`coiter.from_coords` or :func:`coiter.random`."""

    def __init__(self, storage, name=None):
        self._data = storage
        self.name = name
        # The Assignment last assigned, kept once computed: ct.compile(y) compiles it (API.md §3).
        self._definition = None
        self._pending = False     # whether the definition is still to be computed (lazy evaluation)
        self._kernel = None       # the kernel that computes the definition, compiled once
        self._schedule = None     # the schedule its definitions are compiled with (API.md §5)

    @property
    def _storage(self):
        """The tensor's data, computing a pending definition first."""
        if self._pending:
            self.evaluate()
        return self._data

    def _set_storage(self, storage):
        self._data = storage

    # -- devices (API.md §6) ------------------------------------------------------------------
    @property
    def device(self):
        """Where the tensor's arrays live: ``"cpu"``, or ``"cuda"`` after ``to("cuda")`` and for
        results of GPU kernels with a device operand."""
        return self._storage.device

    @property
    def __cuda_array_interface__(self):
        """An all-dense GPU tensor's values, for CuPy, Numba and PyTorch (no copy)."""
        if self.device != "cuda" or not is_all_dense(self.format) or tuple(self.format.mode_order) != tuple(range(self.ndim)):
            raise AttributeError("__cuda_array_interface__: only all-dense, row-major tensors on a GPU have one")
        address = _core.device_addresses(self._storage)["values"][0]
        return {"shape": tuple(self.shape), "typestr": self.dtype.str, "data": (address, True), "version": 3,
                "strides": None}

    def to(self, device):
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
            from . import cuda
            cuda.prepare()
            return Tensor(_core.to_device(self._storage), self.name)
        return Tensor(_core.to_host(self._storage), self.name)

    # -- index notation (API.md §3) -------------------------------------------------------
    def __setitem__(self, key, value):
        from .notation import (Access, Assignment, _wrap, accesses, check_depth, check_extents, index_key,
                               map_tensors)
        variables = index_key(key, self.ndim, self._label())
        if variables is None:
            raise TypeError("coiter tensors are assigned with index variables, e.g. y[i] = A[i, j] * x[j]")
        rhs = _wrap(value)
        check_depth(rhs, f"assignment to {self._label()}")
        if any(a.tensor is self for a in accesses(rhs)):
            # y[i] += e (or y[i] = y[i] * 2): the right side reads y as it is now.
            current = Tensor(self._storage, self.name)
            rhs = map_tensors(rhs, lambda t: current if t is self else t)
        self._check_operands(rhs)
        lhs = Access(self, variables)
        check_extents([lhs] + accesses(rhs), lambda t: t.shape)
        self._definition = Assignment(lhs, rhs)
        self._pending = True
        self._kernel = None

    def schedule(self, schedule):
        """Compile this tensor's definitions with ``schedule`` (a :class:`coiter.Schedule`, its
        text, or None for the default schedule); returns the tensor, so
        ``y.schedule(s).evaluate()`` chains."""
        from .schedule import schedule_text
        schedule_text(schedule)  # reject a malformed schedule here, not at evaluation
        self._schedule = schedule
        self._kernel = None
        return self

    def _check_operands(self, rhs):
        from .notation import accesses
        for access in accesses(rhs):
            if not isinstance(access.tensor, Tensor):
                raise TypeError(f"only coiter tensors can be indexed in an expression; wrap "
                                f"{type(access.tensor).__name__} with ct.asarray")

    def evaluate(self):
        """Compute the pending definition now (it is otherwise computed on first data access)."""
        if not self._pending:
            return self
        if self._kernel is None:
            from .compiler import compile
            compile(self)  # sets self._kernel
        self._kernel()
        self._pending = False
        return self

    @classmethod
    def _from_level_arrays(cls, format, shape, index_dtype, arrays, parameters, values,
                           name=None):
        """Rebuild a tensor from its level arrays (validated at once)."""
        shape = tuple(int(e) for e in shape)
        fmt = as_format(format, len(shape))
        arrays = [{k: np.ascontiguousarray(v, dtype=index_dtype) for k, v in level.items()}
                  for level in arrays]
        parameters = [{k: int(v) for k, v in level.items()} for level in parameters]
        values = np.ascontiguousarray(values, dtype=value_dtype(np.asarray(values).dtype))
        storage = _core.from_arrays(fmt, list(shape), np.dtype(index_dtype).name, arrays,
                                    parameters, values.reshape(-1))
        storage.validate()
        return cls(storage, name)

    # -- attributes ---------------------------------------------------------------------
    @property
    def shape(self):
        return tuple(self._data.shape)

    @property
    def ndim(self):
        return len(self._data.shape)

    @property
    def dtype(self):
        return np.dtype(self._data.dtype)

    @property
    def index_dtype(self):
        """Width of the index arrays: int32 or int64."""
        return np.dtype(self._data.index_dtype)

    @property
    def format(self):
        return self._data.format

    @property
    def nnz(self):
        """Number of stored entries (explicit zeros included, empty slots excluded)."""
        return self._storage.nnz

    @property
    def values(self):
        """The value array, a NumPy view of the tensor's memory."""
        return self._storage.values

    @property
    def levels(self):
        types = self.format.levels
        return [Level(t, arrays, params) for t, arrays, params in
                zip(types, self._storage.level_arrays, self._storage.level_parameters)]

    @property
    def size(self):
        return math.prod(self.shape)

    # -- conversions --------------------------------------------------------------------
    def to_numpy(self):
        """A new dense NumPy array with the tensor's contents."""
        if is_all_dense(self.format):
            return self.values.reshape(self.shape).copy()
        _core.check_dense_array(self.shape, self.dtype.name, f"to_numpy of {self._label()} "
                                f"of shape {self.shape}")
        out = np.zeros(self.shape, dtype=self.dtype)
        self._storage.to_dense(out.reshape(-1))
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False and not is_all_dense(self.format):
            raise ValueError("a sparse tensor cannot be viewed as a NumPy array without a copy")
        if is_all_dense(self.format) and not copy:
            array = self.values.reshape(self.shape)
        else:
            array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def to_scipy(self, format=None):
        """A SciPy sparse array (2-D tensors only): "csr", "csc" or "coo"."""
        from .scipy_interop import to_scipy
        return to_scipy(self, format)

    def asformat(self, format):
        """The same tensor stored in another format (self when it already is)."""
        fmt = as_format(format, self.ndim)
        if fmt == self.format:
            return self
        coords, values = self._storage.entries()
        bits = 64 if self.index_dtype == np.int64 else 32
        return pack(fmt, self.shape, [coords[:, m] for m in range(self.ndim)], values,
                    name=self.name, index_bits=bits)

    def copy(self):
        """A deep copy that owns its memory."""
        return Tensor(self._storage.copy(), self.name)

    def coords(self):
        """``(coords, values)``: an ``(nnz, ndim)`` int64 array of the stored entries'
        coordinates (column k holds mode k) in storage order, and their values."""
        return self._storage.entries()

    # -- element access -----------------------------------------------------------------
    def __getitem__(self, key):
        from .notation import Access, index_key
        variables = index_key(key, self.ndim, self._label())
        if variables is not None:
            return Access(self, variables)
        key = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(k, (int, np.integer)) for k in key):
            raise TypeError("coiter tensors support integer element reads such as T[0, 3]; "
                            f"got {key!r}")
        if len(key) != self.ndim:
            from .errors import ShapeError
            raise ShapeError(f"{self._label()} has {self.ndim} modes but was indexed with "
                             f"{len(key)} integers")
        coords = [int(k) + (self.shape[m] if k < 0 else 0) for m, k in enumerate(key)]
        return self._storage.element(coords)

    def _label(self):
        return f"tensor {self.name!r}" if self.name else "the tensor"

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        name = f" name={self.name!r}" if self.name else ""
        return (f"<coiter.Tensor{name} shape={self.shape} dtype={self.dtype} "
                f"format={self.format} nnz={self.nnz}>")


def pack(fmt, shape, columns, values, sum_duplicates=True, name=None, index_bits=32):
    """A tensor packed (in C++) from one coordinate array per mode and the values.

    ``index_bits=32`` gives int32 indices when everything fits, else int64; 64 forces int64.
    """
    columns = [np.ascontiguousarray(c, dtype=np.int64) if np.asarray(c).dtype not in
               (np.int32, np.int64) else np.ascontiguousarray(c) for c in columns]
    storage = _core.pack(fmt, [int(e) for e in shape], columns, np.ascontiguousarray(values),
                         sum_duplicates, index_bits)
    return Tensor(storage, name)
