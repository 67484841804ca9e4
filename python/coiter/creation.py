"""Creating tensors from data (docs/reference.md, "Tensors"): dense arrays and Python data,
coordinates, zeros, random entries. ``ct.asarray``, which takes any object, dispatches here
(conversion.py)."""

import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _core
from .dtypes import value_dtype
from .errors import ShapeError
from .formats import Format, FormatLike, as_format, is_all_dense
from .shapes import ShapeLike
from .tensor import Tensor, pack


def from_dense(
    obj: ArrayLike,
    format: FormatLike | None,
    dtype: DTypeLike | None,
    copy: bool | None,
    name: str | None,
) -> Tensor:
    """A tensor holding a NumPy array, or what ``np.asarray`` makes of ``obj`` (nested lists,
    scalars); the arguments are ``ct.asarray``'s."""
    source = obj if isinstance(obj, np.ndarray) else np.asarray(obj)
    what = f"tensor {name!r}" if name else "input array"
    target_dtype = value_dtype(source.dtype if dtype is None else dtype, what)
    fmt = as_format("dense" if format is None else format, source.ndim)
    if is_all_dense(fmt):
        array = source
        needs_copy = (
            array.dtype != target_dtype
            or not array.flags.c_contiguous
            or not array.dtype.isnative
            or array is not obj
        )
        if copy is False and needs_copy:
            raise ValueError(
                f"copy=False, but {what} must be copied (dtype {array.dtype} "
                f"to {target_dtype}, or not C-contiguous)"
            )
        array = (
            np.array(array, dtype=target_dtype, order="C", copy=True)
            if (copy or needs_copy)
            else array
        )
        return wrap_dense(array, fmt, name)
    if copy is False:
        raise ValueError(f"copy=False, but storing {what} in format {fmt} needs a copy")
    array = source.astype(target_dtype, copy=False)
    coords = np.nonzero(array)
    return pack(fmt, array.shape, coords, array[coords], True, name)


def wrap_dense(array: NDArray[Any], fmt: Format, name: str | None) -> Tensor:
    # `array` is C-contiguous, native and of a supported dtype (the caller converted it).
    return Tensor(_core.wrap_dense(array, fmt), name)


def from_coords(
    coords: ArrayLike,
    values: ArrayLike,
    shape: ShapeLike,
    format: FormatLike = "coo",
    sum_duplicates: bool = True,
    dtype: DTypeLike | None = None,
    name: str | None = None,
) -> Tensor:
    """A tensor packed from the coordinates and values of its entries.

    Parameters
    ----------
    coords : array_like of int, shape (nnz, order)
        Row k holds the coordinates of entry k (0-based), in any order.
    values : array_like, shape (nnz,), or scalar
        The entries' values; a scalar is given to every entry.
    shape : tuple of int
        The tensor's extents; every coordinate must lie within them.
    format : Format or str, default "coo"
        The format to pack into (see :func:`as_format`).
    sum_duplicates : bool, default True
        Sum entries with equal coordinates. When False, duplicates are kept if the format can
        hold them (COO) and rejected otherwise.
    dtype : dtype, optional
        The value dtype; by default that of ``values``.
    name : str, optional
        The tensor's name (error messages, kernel input names).

    Returns
    -------
    Tensor

    Raises
    ------
    ShapeError
        If ``coords`` is not ``(nnz, len(shape))``, ``values`` does not match it, or a
        coordinate lies outside ``shape``.
    FormatError
        If duplicates are kept but the format cannot hold them.
    TypeError
        If ``coords`` is not integral or the dtype is not supported.

    Examples
    --------
    >>> T = ct.from_coords([[0, 1], [2, 0], [0, 1]], [1.0, 2.0, 3.0], shape=(3, 2), format="csr")
    >>> T.to_numpy()
    array([[0., 4.],
           [0., 0.],
           [2., 0.]])
    """
    shape = checked_shape(shape)
    order = len(shape)
    coords = np.asarray(coords)
    if coords.size == 0:
        coords = coords.reshape(0, order)
    if coords.ndim != 2 or coords.shape[1] != order:
        raise ShapeError(
            f"coords must have shape (nnz, {order}) for a tensor of shape "
            f"{shape}, got {coords.shape}"
        )
    if not np.issubdtype(coords.dtype, np.integer):
        raise TypeError(f"coords must be integers, not {coords.dtype}")
    values = np.asarray(values)
    if values.ndim == 0:
        values = np.full(coords.shape[0], values)
    if values.shape != (coords.shape[0],):
        raise ShapeError(f"{coords.shape[0]} coordinates but values have shape {values.shape}")
    values = values.astype(value_dtype(values.dtype if dtype is None else dtype), copy=False)
    fmt = as_format(format, order)
    return pack(fmt, shape, [coords[:, m] for m in range(order)], values, sum_duplicates, name)


def zeros(
    shape: ShapeLike,
    format: FormatLike = "dense",
    dtype: DTypeLike = np.float64,
    name: str | None = None,
) -> Tensor:
    """A tensor of zeros.

    Parameters
    ----------
    shape : int or tuple of int
        The extents.
    format : Format or str, default "dense"
        The format; a sparse one stores no entries.
    dtype : dtype, default float64
        The value dtype.
    name : str, optional
        The tensor's name.

    Returns
    -------
    Tensor

    Raises
    ------
    ShapeError
        If a dense tensor of this shape would exceed the largest array coiter allocates.
    """
    shape = checked_shape(shape)
    dtype = value_dtype(dtype)
    fmt = as_format(format, len(shape))
    if is_all_dense(fmt):
        _core.check_dense_array(shape, dtype.name, f"zeros of shape {shape}")
        return wrap_dense(np.zeros(shape, dtype=dtype), fmt, name)
    empty = np.zeros(0, dtype=np.int32)
    return pack(fmt, shape, [empty] * len(shape), np.zeros(0, dtype=dtype), True, name)


def random(
    shape: ShapeLike,
    density: float,
    format: FormatLike = "csr",
    dtype: DTypeLike = np.float64,
    seed: int | np.random.SeedSequence | None = None,
    name: str | None = None,
) -> Tensor:
    """A tensor with ``round(density * size)`` entries at distinct random coordinates.

    Parameters
    ----------
    shape : int or tuple of int
        The extents.
    density : float
        The fraction of coordinates stored, in [0, 1].
    format : Format or str, default "csr"
        The format to pack into.
    dtype : dtype, default float64
        The value dtype. Values are uniform in [0, 1) for floating dtypes (real and imaginary
        parts for complex ones), integers 1 to 9 for integer dtypes, and True for bool.
    seed : int or numpy.random.SeedSequence, optional
        Seeds NumPy's default generator; the same seed gives the same tensor.
    name : str, optional
        The tensor's name.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        If ``density`` is outside [0, 1].

    Examples
    --------
    >>> R = ct.random((100, 50), density=0.1, format="csr", seed=0)
    >>> R.nnz, R.format
    (500, Format('ds'))
    """
    shape = checked_shape(shape)
    if not 0.0 <= float(density) <= 1.0:
        raise ValueError(f"density must lie in [0, 1], got {density}")
    dtype = value_dtype(dtype)
    rng = np.random.default_rng(seed)
    size = math.prod(shape)
    nnz = int(round(float(density) * size))
    flat = _distinct_sample(rng, size, nnz)
    coords = np.unravel_index(flat, shape) if shape else ()
    return pack(
        as_format(format, len(shape)),
        shape,
        list(coords),
        _random_values(rng, nnz, dtype),
        True,
        name,
    )


def _distinct_sample(rng: np.random.Generator, population: int, count: int) -> NDArray[np.int64]:
    """``count`` distinct integers below ``population``, sorted."""
    if count > population // 2:
        return np.sort(rng.permutation(population)[:count])
    chosen = np.unique(rng.integers(0, population, size=count))
    while chosen.size < count:  # top up collisions; converges fast below half density
        extra = rng.integers(0, population, size=count - chosen.size)
        chosen = np.unique(np.concatenate([chosen, extra]))
    return chosen


def _random_values(rng: np.random.Generator, count: int, dtype: np.dtype[Any]) -> NDArray[Any]:
    if dtype.kind == "b":
        return np.ones(count, dtype=dtype)
    if dtype.kind in "iu":
        return rng.integers(1, 10, size=count).astype(dtype)
    if dtype.kind == "c":
        return (rng.random(count) + 1j * rng.random(count)).astype(dtype)
    return rng.random(count).astype(dtype)


def checked_shape(shape: ShapeLike) -> tuple[int, ...]:
    """``shape`` (an extent or a sequence of them) as a tuple of ints, or ShapeError."""
    # (not an extent: a sequence, or anything else that iterates, its items checked below)
    extents = (
        (shape,) if isinstance(shape, (int, np.integer)) else tuple(cast(Iterable[Any], shape))
    )
    for m, extent in enumerate(extents):
        if not isinstance(extent, (int, np.integer)) or not 0 <= extent < 2**63:
            raise ShapeError(f"mode {m}: extent {extent!r} is not an integer in [0, 2**63)")
    return tuple(int(e) for e in extents)
