"""Converting the values read from a file to the dtype the caller asked for.

Shared by all three readers (Matrix Market, FROSTT, ``.npz``).
"""

import numpy as np


def _cast_values(values, dtype, path):
    """``values`` as ``dtype``, refusing conversions that would change a value."""
    if dtype is None or values.dtype == dtype:
        return values
    if (
        values.dtype.kind in "fc"
        and dtype.kind in "fc"
        and (values.dtype.kind == dtype.kind or dtype.kind == "c")
    ):
        return values.astype(dtype)  # float64 -> float32 rounds: that is what was asked
    if values.dtype.kind == "c":
        if np.any(values.imag != 0):
            raise ValueError(
                f"{path}: complex values with a nonzero imaginary part do not fit dtype {dtype}"
            )
        values = values.real
    with np.errstate(invalid="ignore", over="ignore"):
        converted = values.astype(dtype)
        exact = np.array_equal(converted.astype(values.dtype), values)
    if not exact:
        raise ValueError(
            f"{path}: the file's values do not all fit dtype {dtype} exactly "
            f"(they read as {values.dtype})"
        )
    return converted
