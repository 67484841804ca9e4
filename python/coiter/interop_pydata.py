"""pydata/sparse (``sparse.COO``, ``sparse.GCXS``) to and from coiter tensors.

Into coiter: a 2-D GCXS compressed along axis 0 (1) with sorted, unique indices is CSR (CSC) and
is wrapped without copying; other arrays are packed from their coordinates (O(nnz)). Out of
coiter: ``T.to_pydata("coo")`` hands over the coordinates and values; ``"gcxs"`` of a CSR or CSC
tensor shares its arrays. pydata/sparse is optional (``pip install coiter[pydata]``); nothing
here imports it until used. A fill value other than zero has no coiter equivalent: FormatError.
"""

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .creation import from_coords
from .errors import FormatError
from .formats import FormatLike
from .scipy_interop import from_scipy
from .tensor import Tensor, canonical


def is_pydata(obj: object) -> bool:
    module = type(obj).__module__ or ""
    return module == "sparse" or module.startswith("sparse.")


def from_pydata(
    array: Any,
    format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    name: str | None = None,
) -> Tensor:
    fill = array.fill_value
    if not (fill == 0 or (np.ndim(fill) == 0 and not bool(fill))):
        raise FormatError(
            f"pydata/sparse array with fill value {fill!r}: coiter tensors are zero "
            "where nothing is stored"
        )
    kind = type(array).__name__
    if kind == "GCXS" and array.ndim == 2 and format is None and dtype is None:
        axis = tuple(array.compressed_axes)
        scipy_matrix = array.to_scipy_sparse()  # shares indptr, indices and data
        if axis in ((0,), (1,)) and scipy_matrix.has_canonical_format:
            return from_scipy(scipy_matrix, name=name)
    coo = array if kind == "COO" else array.tocoo()
    coords = np.asarray(coo.coords).T
    fmt = format if format is not None else ("coo" if array.ndim >= 2 else "s")
    values = coo.data if dtype is None else coo.data.astype(dtype)
    return from_coords(coords, values, array.shape, format=fmt, name=name)


def to_pydata(tensor: Tensor, kind: str = "coo") -> Any:
    import sparse

    if kind == "gcxs":
        fmt = tensor.format
        if (
            tensor.ndim == 2
            and fmt.name is None
            and [lv.name for lv in fmt.levels] == ["dense", "compressed"]
        ):
            level = tensor.levels[1]
            compressed_axis = fmt.mode_order[0]
            return sparse.GCXS(
                (tensor.values, level.crd, level.pos),
                shape=tensor.shape,
                compressed_axes=(compressed_axis,),
            )
        return sparse.GCXS(to_pydata(tensor, "coo"))
    if kind != "coo":
        raise FormatError(f"to_pydata: kind must be 'coo' or 'gcxs', not {kind!r}")
    coords, values = canonical(tensor).coords()
    return sparse.COO(coords.T, values, shape=tensor.shape, has_duplicates=False, sorted=False)
