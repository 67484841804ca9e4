"""NumPy's shape rules for tensors: broadcasting shapes together and normalizing ``axis``
arguments."""

from collections.abc import Iterable, Sequence
from typing import SupportsIndex, TypeAlias

import numpy as np

from .errors import ShapeError

# A shape as the API takes it: one extent, or a sequence of them.
ShapeLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex]


def broadcast_shape(shapes: Iterable[Sequence[int]], what: str = "operands") -> tuple[int, ...]:
    as_tuples = [tuple(s) for s in shapes]
    if all(s == as_tuples[0] for s in as_tuples):  # the common case, without NumPy's general rules
        return as_tuples[0]
    try:
        return tuple(np.broadcast_shapes(*as_tuples))
    except ValueError:
        raise ShapeError(
            f"{what} could not be broadcast together with shapes "
            f"{' '.join(str(s) for s in as_tuples)}"
        ) from None


def normalize_axes(
    axis: int | Sequence[int] | None, ndim: int, what: str = "axis"
) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence) as a sorted tuple of non-negative modes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result: list[int] = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise np.exceptions.AxisError(
                f"{what} {a!r} is out of bounds for a tensor of dimension {ndim}"
            )
        a = int(a) % ndim if ndim else 0
        if a in result:
            raise ValueError(f"repeated {what} {a}")
        result.append(a)
    return tuple(sorted(result))
