"""Reading and writing tensors (docs/reference.md, "Tensors"; docs/io.md).

Three file formats, chosen by the file's extension:

* Matrix Market (``.mtx``, ``.mtx.gz``): matrices, coordinate or array layout.
* FROSTT (``.tns``, ``.tns.gz``): one ``i j k ... value`` line per entry, any order.
* coiter's own ``.npz``: any tensor in any format, saved exactly (level arrays, values,
  index width), loaded without pickle.

Text bodies are parsed by the core's parser (``_core.parse_text_entries``), in parallel
chunks, without the GIL, straight into the arrays packing takes (0-based int32 coordinates
when they fit), which the tensor then keeps where it can (by :func:`numpy.loadtxt` only for
FROSTT values read as complex, one token each, which the core does not parse). A malformed
line is reported by number and checked again in Python to say what is wrong with it; when a
count or coordinate check fails, the file is scanned again line by line, to name the
offending line in the :class:`~coiter.ParseError`.

This package holds the public functions and the choice of format by extension; each
format lives in its own module (:mod:`.matrix_market`, :mod:`.frostt`, :mod:`.npz`), and
the parsing and error reporting both text formats share in :mod:`.text_table`.
"""

import gzip
import os
import zlib
from typing import Any

from numpy.typing import DTypeLike

from ..conversion import asarray
from ..creation import checked_shape
from ..dtypes import value_dtype
from ..errors import ParseError
from ..formats import FormatLike
from ..shapes import ShapeLike
from ..tensor import Tensor
from .frostt import _read_frostt, _write_frostt
from .matrix_market import _read_matrix_market, _write_matrix_market
from .npz import _read_npz, load, save

__all__ = ["read", "write", "save", "load"]

_EXTENSIONS = {".mtx": "mtx", ".mtx.gz": "mtx", ".tns": "tns", ".tns.gz": "tns", ".npz": "npz"}


def read(
    path: str | os.PathLike[str],
    format: FormatLike | None = None,
    shape: ShapeLike | None = None,
    dtype: DTypeLike | None = None,
) -> Tensor:
    """Read a tensor from a file; the extension selects the file format.

    Parameters
    ----------
    path : str or os.PathLike
        A Matrix Market file (``.mtx``, ``.mtx.gz``), a FROSTT file (``.tns``,
        ``.tns.gz``) or a file written by :func:`save` (``.npz``).
    format : Format, str or None
        Format of the result. By default: ``"csr"`` for a coordinate Matrix Market file,
        ``"dense"`` for an array Matrix Market file, ``"coo"`` for a FROSTT file, and the
        saved format for ``.npz``.
    shape : tuple of int or None
        Extents of the result. Matrix Market files declare their size and FROSTT files
        default to the largest coordinate of each mode; a larger ``shape`` pads the
        tensor, a smaller one raises :class:`~coiter.ShapeError`. For ``.npz`` it must
        equal the saved shape.
    dtype : dtype or None
        Value dtype. By default float64 (Matrix Market ``real`` and ``pattern``, FROSTT),
        int64 (``integer``), complex128 (``complex``) or the saved dtype (``.npz``).
        A conversion that would change a value (``1.5`` to an integer, a nonzero
        imaginary part to a real dtype) raises ``ValueError``; narrowing a float to
        float32 rounds, as asked.

    Returns
    -------
    Tensor

    Raises
    ------
    ParseError
        The file is malformed; the message names the path and the 1-based line.
    ShapeError
        ``shape`` is smaller than the file's coordinates or size.
    ValueError
        The extension is not one of the supported ones.
    FileNotFoundError
        The file does not exist.
    """
    path = os.fspath(path)
    kind = _file_kind(path)
    dtype = None if dtype is None else value_dtype(dtype, f"read({path!r})")
    shape = None if shape is None else checked_shape(shape)
    if kind == "npz":
        return _read_npz(path, format, shape, dtype)
    reader = _read_matrix_market if kind == "mtx" else _read_frostt
    try:
        return reader(path, format, shape, dtype)
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        # Damaged gzip data (.mtx.gz, .tns.gz): a bad header or CRC, a truncated or corrupt
        # deflate stream. The line is unknown: the text ends where the damage begins.
        raise ParseError(
            f"{path}: damaged gzip data ({type(error).__name__}: {error})", path=path
        ) from error


def write(path: str | os.PathLike[str], tensor: Any, *, symmetry: str = "general") -> None:
    """Write a tensor to a file; the extension selects the file format.

    Parameters
    ----------
    path : str or os.PathLike
        ``.mtx`` / ``.mtx.gz`` (matrices), ``.tns`` / ``.tns.gz`` (any order ≥ 1) or
        ``.npz`` (any tensor, exactly; same as :func:`save`).
    tensor : Tensor or array_like
        Anything :func:`coiter.asarray` accepts.
    symmetry : {"general", "symmetric"}
        Matrix Market only. ``"symmetric"`` stores the lower triangle of a symmetric
        matrix (explicit zeros are dropped) and raises ``ValueError`` if the matrix is
        not symmetric.

    Notes
    -----
    Matrix Market files get the ``real`` field for float tensors, ``integer`` for integer
    and bool tensors and ``complex`` for complex ones; all-dense tensors are written in
    the ``array`` layout, others in the ``coordinate`` layout with their stored entries.
    Floats are written in their shortest round-trip form, so reading the file back gives
    the same values.
    """
    path = os.fspath(path)
    kind = _file_kind(path)
    tensor = tensor if isinstance(tensor, Tensor) else asarray(tensor)
    if symmetry not in ("general", "symmetric"):
        raise ValueError(f"symmetry must be 'general' or 'symmetric', not {symmetry!r}")
    if symmetry != "general" and kind != "mtx":
        raise ValueError(f"symmetry={symmetry!r} applies to Matrix Market files only")
    if kind == "mtx":
        _write_matrix_market(path, tensor, symmetry)
    elif kind == "tns":
        _write_frostt(path, tensor)
    else:
        save(path, tensor)


def _file_kind(path: str) -> str:
    """'mtx', 'tns' or 'npz' from the file name's extension."""
    name = os.path.basename(path).lower()
    for extension, kind in _EXTENSIONS.items():
        if name.endswith(extension):
            return kind
    raise ValueError(
        f"cannot tell the file format of {path!r} from its extension; "
        f"supported are {', '.join(_EXTENSIONS)}"
    )
