"""NumPy's shape rules for tensors: broadcasting shapes together and normalizing ``axis``
arguments."""
import numpy as np

from .errors import ShapeError


def broadcast_shape(shapes, what="operands"):
    shapes = [tuple(s) for s in shapes]
    if all(s == shapes[0] for s in shapes):  # the common case, without NumPy's general rules
        return shapes[0]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(f"{what} could not be broadcast together with shapes "
                         f"{' '.join(str(tuple(s)) for s in shapes)}") from None


def normalize_axes(axis, ndim, what="axis"):
    """``axis`` (None, an int or a sequence) as a sorted tuple of non-negative modes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"{what} {a!r} is out of bounds for a tensor of dimension {ndim}")
        a = int(a) % ndim if ndim else 0
        if a in result:
            raise ValueError(f"repeated {what} {a}")
        result.append(a)
    return tuple(sorted(result))
