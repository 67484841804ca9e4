"""pandas sparse DataFrames and Series to and from coiter tensors.

``ct.asarray(df)`` of a DataFrame whose columns are all ``pd.SparseDtype`` keeps the sparsity
(through ``df.sparse.to_coo()``: O(nnz), no dense copy); a dense DataFrame is an ordinary NumPy
array. ``T.to_pandas()`` gives a sparse DataFrame (2-D) or Series (1-D). Only a fill value of zero
maps to coiter's unstored entries.
"""

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .creation import from_coords, from_dense
from .errors import FormatError
from .formats import FormatLike
from .scipy_interop import from_scipy
from .tensor import Tensor


def is_pandas(obj: object) -> bool:
    module = type(obj).__module__ or ""
    return module == "pandas" or module.startswith("pandas.")


def from_pandas(
    obj: Any,
    format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    copy: bool | None = None,
    name: str | None = None,
) -> Tensor:
    import pandas as pd

    if isinstance(obj, pd.Series):
        if isinstance(obj.dtype, pd.SparseDtype):
            _check_fill(obj.dtype)
            values = obj.array
            index = np.asarray(values.sp_index.indices)
            return from_coords(
                index.reshape(-1, 1),
                np.asarray(values.sp_values),
                (len(obj),),
                format=format or "s",
                dtype=dtype,
                name=name,
            )
        return from_dense(obj.to_numpy(), format, dtype, copy, name)
    if isinstance(obj, pd.DataFrame):
        kinds = [isinstance(d, pd.SparseDtype) for d in obj.dtypes]
        if kinds and all(kinds):
            for d in obj.dtypes:
                _check_fill(d)
            return from_scipy(obj.sparse.to_coo(), format, dtype, name=name)
        if any(kinds):
            raise FormatError(
                "a DataFrame with both sparse and dense columns: convert it with "
                "df.astype(pd.SparseDtype(...)) or df.sparse.to_dense() first"
            )
        return from_dense(obj.to_numpy(), format, dtype, copy, name)
    raise TypeError(f"cannot convert {type(obj).__name__} to a tensor")


def _check_fill(dtype):
    fill = dtype.fill_value
    if not (fill == 0 or fill is False):
        raise FormatError(
            f"pandas sparse data with fill value {fill!r}: coiter tensors are zero "
            "where nothing is stored"
        )


def to_pandas(tensor: Tensor, index: Any = None, columns: Any = None) -> Any:
    import pandas as pd

    if tensor.ndim == 2:
        return pd.DataFrame.sparse.from_spmatrix(
            tensor.to_scipy("csc"), index=index, columns=columns
        )
    if tensor.ndim == 1:  # a one-column sparse frame's column (pandas' public constructors)
        column = tensor.reshape(tensor.shape[0], 1).to_scipy("csc")
        return pd.DataFrame.sparse.from_spmatrix(column, index=index).iloc[:, 0].rename(None)
    raise FormatError(f"to_pandas needs a 1-D or 2-D tensor, not shape {tensor.shape}")
