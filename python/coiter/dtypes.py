"""Value and index dtypes coiter supports (docs/reference.md, "Tensors")."""

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

VALUE_DTYPES = tuple(
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
)
INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def value_dtype(dtype: DTypeLike, what: str = "tensor") -> np.dtype[Any]:
    """The NumPy dtype for ``dtype``, or ``TypeError`` naming ``what`` if unsupported."""
    try:
        resolved = np.dtype(dtype)
    except TypeError as error:
        raise TypeError(f"{what}: {dtype!r} is not a dtype") from error
    native = resolved.newbyteorder("=") if resolved.byteorder not in "=|" else resolved
    if native not in VALUE_DTYPES:
        supported = ", ".join(str(d) for d in VALUE_DTYPES)
        raise TypeError(f"{what}: unsupported dtype {resolved}; supported are {supported}")
    return native
