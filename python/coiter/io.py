"""Reading and writing tensors (API.md §2 "File I/O").

Three file formats, chosen by the file's extension:

* Matrix Market (``.mtx``, ``.mtx.gz``): matrices, coordinate or array layout.
* FROSTT (``.tns``, ``.tns.gz``): one ``i j k ... value`` line per entry, any order.
* coiter's own ``.npz``: any tensor in any format, saved exactly (level arrays, values,
  index width), loaded without pickle.

Text bodies are parsed by :func:`numpy.loadtxt` (compiled, millions of lines per second).
Only when it fails, or when a count or coordinate check fails, is the file scanned again
line by line, to name the offending line in the :class:`~coiter.ParseError`.
"""
import gzip
import os
import re
import warnings
import zipfile
from dataclasses import dataclass

import numpy as np

from . import _core, formats
from .creation import _checked_shape, asarray, from_coords
from .dtypes import value_dtype
from .errors import FormatError, ParseError, ShapeError
from .formats import Format, as_format, bcsr, is_all_dense
from .tensor import Tensor

__all__ = ["read", "write", "save", "load"]

_EXTENSIONS = {".mtx": "mtx", ".mtx.gz": "mtx", ".tns": "tns", ".tns.gz": "tns",
               ".npz": "npz"}

# Rows written (or values formatted) per chunk: bounds the memory of the text being built.
_WRITE_CHUNK = 100_000


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------

def read(path, format=None, shape=None, dtype=None):
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
    shape = None if shape is None else _checked_shape(shape)
    if kind == "mtx":
        return _read_matrix_market(path, format, shape, dtype)
    if kind == "tns":
        return _read_frostt(path, format, shape, dtype)
    return _read_npz(path, format, shape, dtype)


def write(path, tensor, *, symmetry="general"):
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


def save(path, tensor, *, compressed=True):
    """Save a tensor to a coiter ``.npz`` file, exactly.

    Every level array and parameter, the values, the shape, the index width and the
    format (including configured level properties) are stored, so :func:`load` rebuilds
    an identical tensor. The file is written at ``path`` as given (no ``.npz`` is
    appended).

    Parameters
    ----------
    path : str or os.PathLike
    tensor : Tensor or array_like
    compressed : bool
        Deflate the arrays (default, as :func:`scipy.sparse.save_npz`).
    """
    tensor = tensor if isinstance(tensor, Tensor) else asarray(tensor)
    description = _describe_format(tensor.format)
    if _format_from_description(description) != tensor.format:
        raise FormatError(f"format {tensor.format!r} cannot be described in a .npz file")
    entries = {_NPZ_MAGIC: np.array(_NPZ_VERSION), "coiter.version": np.array(_core.__version__),
               "shape": np.array(tensor.shape, dtype=np.int64),
               "index_dtype": np.array(tensor.index_dtype.name), "values": tensor.values,
               **description}
    for k, level in enumerate(tensor.levels):
        for name, array in level.arrays.items():
            entries[f"level{k}.array.{name}"] = array
        for name, value in level.parameters.items():
            entries[f"level{k}.param.{name}"] = np.array(value, dtype=np.int64)
    writer = np.savez_compressed if compressed else np.savez
    # Through a file object: given a name, NumPy would append ".npz" to it.
    with open(os.fspath(path), "wb") as stream:
        writer(stream, **entries)


def load(path):
    """Load a tensor written by :func:`save` (any extension), exactly as it was saved.

    Raises
    ------
    ParseError
        The file is not a coiter ``.npz`` file or is incomplete.
    FormatError
        The saved arrays do not form a valid tensor of the saved format.
    """
    path = os.fspath(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile) as error:
        raise ParseError(f"{path} is not a coiter .npz file ({error})", path=path) from error
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ParseError(f"{path} holds a single NumPy array (.npy), not a coiter .npz file",
                         path=path)
    with archive:
        pieces = _npz_pieces(archive, path)
    try:
        return Tensor._from_level_arrays(*pieces)
    except (FormatError, ShapeError) as error:
        raise type(error)(f"{path}: {error}") from error


# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------

def _file_kind(path):
    """'mtx', 'tns' or 'npz' from the file name's extension."""
    name = os.path.basename(path).lower()
    for extension, kind in _EXTENSIONS.items():
        if name.endswith(extension):
            return kind
    raise ValueError(f"cannot tell the file format of {path!r} from its extension; "
                     f"supported are {', '.join(_EXTENSIONS)}")


def _open_text(path, mode="r"):
    # latin-1 decodes any byte, so odd bytes in comments never stop a read; a stray
    # byte in a data field still fails to parse as a number and is reported by line.
    opener = gzip.open if path.lower().endswith(".gz") else open
    return opener(path, mode + "t", encoding="latin-1", newline=None if mode == "r" else "\n")


def _parse_error(path, line, what):
    return ParseError(f"{path}, line {line}: {what}", line=line, path=path)


def _padded_shape(path, found, shape, what):
    """``shape`` when it holds ``found`` (the file's extents), else ShapeError."""
    if shape is None:
        return found
    if len(shape) != len(found):
        raise ShapeError(f"{path} holds an order-{len(found)} tensor but shape={shape} has "
                         f"{len(shape)} modes")
    for mode, (asked, needed) in enumerate(zip(shape, found)):
        if asked < needed:
            raise ShapeError(f"{path}: shape={shape} is smaller than the file's {what} "
                             f"{found} in mode {mode}")
    return shape


def _cast_values(values, dtype, path):
    """``values`` as ``dtype``, refusing conversions that would change a value."""
    if dtype is None or values.dtype == dtype:
        return values
    if values.dtype.kind in "fc" and dtype.kind in "fc" and (
            values.dtype.kind == dtype.kind or dtype.kind == "c"):
        return values.astype(dtype)  # float64 -> float32 rounds: that is what was asked
    if values.dtype.kind == "c":
        if np.any(values.imag != 0):
            raise ValueError(f"{path}: complex values with a nonzero imaginary part do not "
                             f"fit dtype {dtype}")
        values = values.real
    with np.errstate(invalid="ignore", over="ignore"):
        converted = values.astype(dtype)
        exact = np.array_equal(converted.astype(values.dtype), values)
    if not exact:
        raise ValueError(f"{path}: the file's values do not all fit dtype {dtype} exactly "
                         f"(they read as {values.dtype})")
    return converted


# -- table parsing ----------------------------------------------------------------------

# The number syntax numpy.loadtxt accepts (ASCII digits only, no "_" separators).
_INT_TOKEN = re.compile(r"[+-]?\d+", re.ASCII)
_FLOAT_TOKEN = re.compile(r"[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)",
                          re.IGNORECASE | re.ASCII)


@dataclass(frozen=True)
class _Body:
    """Where the data lines of a text file start, and how they are read."""
    path: str
    first_line: int           # 1-based number of the first line that may hold data
    columns: tuple            # ((label, dtype), ...) of the fields of a data line
    comment: str              # text from this character on is a comment


def _load_table(stream, body):
    """Parse the rest of ``stream`` (positioned at ``body.first_line``) into a structured
    array with one field per column; a malformed line raises ParseError naming it."""
    try:
        with warnings.catch_warnings():
            # A body without data lines is legal (an empty matrix); counts are checked later.
            warnings.filterwarnings("ignore", "loadtxt: input contained no data")
            return np.loadtxt(stream, dtype=np.dtype(list(body.columns)),
                              comments=body.comment, ndmin=1)
    except ValueError as error:
        _raise_malformed_line(body)
        raise ParseError(f"{body.path}: {error}", path=body.path) from error


def _data_lines(body):
    """``(line number, fields)`` of each line of the body that is not blank or comment."""
    with _open_text(body.path) as stream:
        for number, text in enumerate(stream, start=1):
            if number < body.first_line:
                continue
            fields = text.split(body.comment, 1)[0].split()
            if fields:
                yield number, fields


def _raise_malformed_line(body):
    """Find the first line NumPy could not parse and raise a ParseError naming it."""
    labels = ", ".join(label for label, _ in body.columns)
    for number, fields in _data_lines(body):
        if len(fields) != len(body.columns):
            raise _parse_error(body.path, number, f"expected {len(body.columns)} fields "
                               f"({labels}), found {len(fields)}")
        for position, (field, (label, dtype)) in enumerate(zip(fields, body.columns), 1):
            problem = _field_problem(field, dtype)
            if problem:
                raise _parse_error(body.path, number, f"field {position} ({label}) {field!r} "
                                   f"{problem}")


def _field_problem(field, dtype):
    """Why ``field`` does not parse as ``dtype`` the way NumPy parses it, or None."""
    if dtype.kind in "iu":
        if not _INT_TOKEN.fullmatch(field):
            return "is not an integer"
        limits = np.iinfo(dtype)
        if not limits.min <= int(field) <= limits.max:
            return f"is outside the {dtype} range"
        return None
    if dtype.kind == "f":
        return None if _FLOAT_TOKEN.fullmatch(field) else "is not a real number"
    try:
        complex(field)
    except ValueError:
        return "is not a complex number"
    return None


def _line_of_entry(body, index):
    """Line number of the ``index``-th (0-based) data line of the body."""
    for position, (number, _) in enumerate(_data_lines(body)):
        if position == index:
            return number
    raise AssertionError(f"{body.path} has no data line {index}")  # callers count first


def _last_line(path):
    with _open_text(path) as stream:
        return max(sum(1 for _ in stream), 1)


def _first_out_of_range(coords, lower, upper):
    """Index of the first row of ``coords`` with a coordinate outside [lower, upper]
    (per column), and that column; None when all fit."""
    bad = (coords < lower) | (coords > np.asarray(upper))
    rows = np.flatnonzero(bad.any(axis=1))
    if rows.size == 0:
        return None
    row = int(rows[0])
    return row, int(np.flatnonzero(bad[row])[0])


def _write_rows(stream, template, columns):
    """Write ``template.format(*row)`` for the rows of ``columns`` (equal-length arrays),
    in chunks: Python's formatting gives shortest round-trip floats."""
    count = len(columns[0]) if columns else 0
    for start in range(0, count, _WRITE_CHUNK):
        chunk = [column[start:start + _WRITE_CHUNK].tolist() for column in columns]
        stream.writelines(map(template.format, *chunk))


def _value_columns(values):
    """The value columns to write and their format template."""
    if values.dtype.kind == "c":
        return [values.real, values.imag], "{!r} {!r}"
    if values.dtype.kind == "f":
        return [values], "{!r}"
    wide = np.uint64 if values.dtype.kind == "u" else np.int64
    return [values.astype(wide)], "{}"


# ---------------------------------------------------------------------------------------
# Matrix Market
# ---------------------------------------------------------------------------------------

_MM_BANNER = "%%MatrixMarket matrix <coordinate|array> <field> <symmetry>"
_MM_FIELDS = ("real", "double", "integer", "complex", "pattern")
_MM_LAYOUTS = ("coordinate", "array")
_MM_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


@dataclass(frozen=True)
class _MMHeader:
    layout: str
    field: str
    symmetry: str
    rows: int
    cols: int
    entries: int        # data lines the size line promises
    size_line: int      # line number of the size line


def _read_matrix_market(path, format, shape, dtype):
    with _open_text(path) as stream:
        header = _read_mm_header(stream, path)
        body = _Body(path, header.size_line + 1, _mm_columns(header, dtype), "%")
        table = _load_table(stream, body)
    _check_entry_count(body, len(table), header.entries, header.size_line)
    shape = _padded_shape(path, (header.rows, header.cols), shape, "declared size")
    if header.layout == "array":
        coords, values = _mm_array_entries(header, _mm_values(table, header, dtype))
        default_format = "dense"
    else:
        coords, values = _mm_coordinate_entries(body, header, table, dtype)
        default_format = "csr"
    values = _cast_values(values, dtype, path)
    return from_coords(coords, values, shape, format=format or default_format)


def _read_mm_header(stream, path):
    """Parse the banner, skip comments and blank lines, parse the size line."""
    banner = stream.readline()
    words = banner.split()
    if not words or words[0].lower() != "%%matrixmarket":
        raise _parse_error(path, 1, f"missing the Matrix Market banner '{_MM_BANNER}'")
    if len(words) != 5:
        raise _parse_error(path, 1, f"the banner must read '{_MM_BANNER}', got "
                           f"{banner.strip()!r}")
    obj, layout, field, symmetry = (word.lower() for word in words[1:])
    _check_word(path, "object", obj, ("matrix",))
    _check_word(path, "layout", layout, _MM_LAYOUTS)
    _check_word(path, "field", field, _MM_FIELDS)
    _check_word(path, "symmetry", symmetry, _MM_SYMMETRIES)
    if field == "pattern" and layout == "array":
        raise _parse_error(path, 1, "a pattern matrix has no values to list in the array "
                           "layout")
    if field == "pattern" and symmetry == "skew-symmetric":
        raise _parse_error(path, 1, "a pattern matrix cannot be skew-symmetric")
    number, fields = _size_line(stream, path)
    expected = 3 if layout == "coordinate" else 2
    if len(fields) != expected or not all(_INT_TOKEN.fullmatch(f) and 0 <= int(f) < 2**63
                                          for f in fields):
        wanted = "rows columns entries" if layout == "coordinate" else "rows columns"
        raise _parse_error(path, number, f"bad size line {' '.join(fields)!r}: expected "
                           f"{expected} integers in [0, 2**63) ({wanted})")
    rows, cols = int(fields[0]), int(fields[1])
    if symmetry != "general" and rows != cols:
        raise _parse_error(path, number, f"a {symmetry} matrix must be square, got "
                           f"{rows} x {cols}")
    entries = int(fields[2]) if layout == "coordinate" else _array_entry_count(rows, cols,
                                                                               symmetry)
    return _MMHeader(layout, "real" if field == "double" else field, symmetry, rows, cols,
                     entries, number)


def _check_word(path, what, word, allowed):
    if word not in allowed:
        raise _parse_error(path, 1, f"unknown Matrix Market {what} {word!r}; expected one "
                           f"of {', '.join(allowed)}")


def _size_line(stream, path):
    """Number and fields of the first line after the banner that is no comment or blank;
    ``stream`` is left just after it, where the data lines begin."""
    number = 1
    for number, text in enumerate(stream, start=2):
        fields = text.split("%", 1)[0].split()
        if fields:
            return number, fields
    raise _parse_error(path, number, "the file ends before the size line")


def _array_entry_count(rows, cols, symmetry):
    """Values an array-layout file holds: all, or one triangle of a square matrix."""
    if symmetry == "general":
        return rows * cols
    if symmetry == "skew-symmetric":
        return rows * (rows - 1) // 2
    return rows * (rows + 1) // 2


def _mm_columns(header, dtype):
    """((label, dtype), ...) of a data line for this header."""
    coords = ((("row", np.dtype(np.int64)), ("column", np.dtype(np.int64)))
              if header.layout == "coordinate" else ())
    if header.field == "pattern":
        return coords
    if header.field == "complex":
        return coords + (("real part", np.dtype(np.float64)),
                         ("imaginary part", np.dtype(np.float64)))
    if header.field == "integer":
        # uint64 requested: parse as such so values above 2**63 survive (unless mirrored
        # entries get negated, which unsigned values cannot hold).
        unsigned = (dtype is not None and dtype.kind == "u"
                    and header.symmetry != "skew-symmetric")
        wide = np.uint64 if unsigned else np.int64
        return coords + (("value", np.dtype(wide)),)
    return coords + (("value", np.dtype(np.float64)),)


def _mm_values(table, header, dtype):
    if header.field == "pattern":
        return np.ones(len(table), dtype=dtype or np.float64)
    if header.field == "complex":
        # Not real + 1j * imag: 1j * inf would turn the real part into nan.
        values = np.empty(len(table), dtype=np.complex128)
        values.real, values.imag = table["real part"], table["imaginary part"]
        return values
    return np.ascontiguousarray(table["value"])


def _check_entry_count(body, found, declared, size_line):
    if found < declared:
        raise _parse_error(body.path, _last_line(body.path),
                           f"the size line (line {size_line}) declares {declared} entries "
                           f"but the file ends after {found}")
    if found > declared:
        raise _parse_error(body.path, _line_of_entry(body, declared),
                           f"entry {declared + 1} is beyond the {declared} entries the size "
                           f"line (line {size_line}) declares")


def _mm_coordinate_entries(body, header, table, dtype):
    """0-based coordinates and values of a coordinate file, symmetric parts mirrored."""
    coords = np.column_stack([table["row"], table["column"]]).reshape(-1, 2)
    outside = _first_out_of_range(coords, 1, (header.rows, header.cols))
    if outside is not None:
        entry, mode = outside
        name, extent = ("row", header.rows) if mode == 0 else ("column", header.cols)
        raise _parse_error(body.path, _line_of_entry(body, entry),
                           f"{name} coordinate {coords[entry, mode]} is outside 1..{extent}")
    values = _mm_values(table, header, dtype)
    coords -= 1
    if header.symmetry == "general":
        return coords, values
    if header.symmetry == "skew-symmetric":
        diagonal = np.flatnonzero((coords[:, 0] == coords[:, 1]) & (values != 0))
        if diagonal.size:
            raise _parse_error(body.path, _line_of_entry(body, int(diagonal[0])),
                               "a skew-symmetric matrix has a zero diagonal, but this "
                               "entry on it is nonzero")
    return _mirrored(coords, values, header.symmetry)


def _mirrored(coords, values, symmetry):
    """Add the transposed twin of every off-diagonal entry of a symmetric file."""
    off = coords[:, 0] != coords[:, 1]
    twins = values[off]
    if symmetry == "skew-symmetric":
        twins = -twins
    elif symmetry == "hermitian":
        twins = np.conj(twins)
    return (np.concatenate([coords, coords[off][:, ::-1]]),
            np.concatenate([values, twins]))


def _mm_array_entries(header, values):
    """Coordinates and values of the nonzeros of an array (column-major) file."""
    n_rows, n_cols = header.rows, header.cols
    dense = np.zeros((n_rows, n_cols), dtype=values.dtype)
    if header.symmetry == "general":
        dense[...] = values.reshape(n_cols, n_rows).T
    else:
        # The lower triangle column by column: column j holds rows j.. (j+1.. if skew),
        # which is np.triu_indices' row-major order with the roles swapped.
        cols, rows = np.triu_indices(n_rows, k=1 if header.symmetry == "skew-symmetric"
                                     else 0)
        dense[rows, cols] = values
        twin = {"symmetric": values, "skew-symmetric": -values,
                "hermitian": np.conj(values)}[header.symmetry]
        off = rows != cols
        dense[cols[off], rows[off]] = twin[off]
    coords = np.argwhere(dense)
    return coords, dense[coords[:, 0], coords[:, 1]]


def _write_matrix_market(path, tensor, symmetry):
    if tensor.ndim != 2:
        raise ShapeError(f"Matrix Market files hold matrices; this tensor has order "
                         f"{tensor.ndim} (write it as .tns or .npz)")
    field = {"c": "complex", "f": "real"}.get(tensor.dtype.kind, "integer")
    n_rows, n_cols = tensor.shape
    with _open_text(path, "w") as stream:
        if symmetry == "general" and is_all_dense(tensor.format):
            columns, template = _value_columns(tensor.to_numpy().ravel(order="F"))
            _write_mm_header(stream, "array", field, symmetry, f"{n_rows} {n_cols}")
            _write_rows(stream, template + "\n", columns)
            return
        coords, values = tensor.coords()
        if symmetry == "symmetric":
            coords, values = _lower_triangle_of_symmetric(coords, values, tensor.shape)
        columns, template = _value_columns(values)
        _write_mm_header(stream, "coordinate", field, symmetry,
                         f"{n_rows} {n_cols} {len(values)}")
        _write_rows(stream, "{} {} " + template + "\n",
                    [coords[:, 0] + 1, coords[:, 1] + 1, *columns])


def _write_mm_header(stream, layout, field, symmetry, size):
    stream.write(f"%%MatrixMarket matrix {layout} {field} {symmetry}\n"
                 f"% written by coiter {_core.__version__}\n{size}\n")


def _lower_triangle_of_symmetric(coords, values, shape):
    """The nonzero lower-triangle entries, after checking the matrix equals its transpose."""
    n_rows, n_cols = shape
    if n_rows != n_cols:
        raise ValueError(f"symmetry='symmetric' needs a square matrix, got {n_rows} x {n_cols}")
    # Sum duplicates and drop zeros, so the comparison sees the matrix, not its storage.
    keys, inverse = np.unique(coords[:, 0] * n_cols + coords[:, 1], return_inverse=True)
    summed = np.zeros(len(keys), dtype=values.dtype)
    np.add.at(summed, inverse.reshape(-1), values)
    keys, summed = keys[summed != 0], summed[summed != 0]
    rows, cols = keys // n_cols, keys % n_cols
    transposed = np.argsort(cols * n_cols + rows, kind="stable")
    if not (np.array_equal((cols * n_cols + rows)[transposed], keys)
            and np.array_equal(summed[transposed], summed)):
        raise ValueError("symmetry='symmetric', but the matrix is not symmetric")
    lower = rows >= cols
    return np.column_stack([rows[lower], cols[lower]]), summed[lower]


# ---------------------------------------------------------------------------------------
# FROSTT
# ---------------------------------------------------------------------------------------

def _read_frostt(path, format, shape, dtype):
    first = _first_frostt_line(path)
    if first is None:
        if shape is None:
            raise ShapeError(f"{path} holds no entries, so its shape is unknown: pass shape=")
        no_values = np.zeros(0, dtype=dtype or np.float64)
        return from_coords(np.zeros((0, len(shape)), dtype=np.int64), no_values, shape,
                           format=format or "coo")
    number, field_count = first
    if field_count < 2:
        raise _parse_error(path, number, "a FROSTT line needs at least one coordinate and a "
                           "value")
    order = field_count - 1
    columns = tuple((f"mode {m + 1} coordinate", np.dtype(np.int64)) for m in range(order))
    body = _Body(path, number, columns + (("value", _frostt_value_dtype(dtype)),), "#")
    with _open_text(path) as stream:
        for _ in range(number - 1):
            stream.readline()
        table = _load_table(stream, body)
    coords = np.column_stack([table[label] for label, _ in columns]).reshape(-1, order)
    outside = _first_out_of_range(coords, 1, np.iinfo(np.int64).max)
    if outside is not None:
        entry, mode = outside
        raise _parse_error(path, _line_of_entry(body, entry), f"mode {mode + 1} coordinate "
                           f"{coords[entry, mode]} is below 1 (FROSTT coordinates are 1-based)")
    extents = tuple(int(e) for e in coords.max(axis=0))
    if shape is not None and len(shape) == order:
        _check_frostt_shape(body, coords, shape)
    shape = _padded_shape(path, extents, shape, "largest coordinates")
    values = _cast_values(np.ascontiguousarray(table["value"]), dtype, path)
    return from_coords(coords - 1, values, shape, format=format or "coo")


def _first_frostt_line(path):
    """(line number, field count) of the first data line, or None for an empty file."""
    body = _Body(path, 1, (), "#")
    for number, fields in _data_lines(body):
        return number, len(fields)
    return None


def _frostt_value_dtype(dtype):
    """The dtype the value column is parsed as: exact for the requested dtype's kind."""
    if dtype is None or dtype.kind == "f":
        return np.dtype(np.float64)
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.uint64 if dtype.kind == "u" else np.int64)


def _check_frostt_shape(body, coords, shape):
    outside = _first_out_of_range(coords, 1, shape)
    if outside is not None:
        entry, mode = outside
        raise ShapeError(f"{body.path}, line {_line_of_entry(body, entry)}: mode {mode + 1} "
                         f"coordinate {coords[entry, mode]} is outside shape={shape} "
                         f"(extent {shape[mode]})")


def _write_frostt(path, tensor):
    if tensor.ndim == 0:
        raise ShapeError("FROSTT files hold tensors of order >= 1; this one is a scalar")
    if tensor.dtype.kind == "c":
        raise TypeError("FROSTT files hold real values; write complex tensors as .mtx "
                        "(matrices) or .npz")
    coords, values = tensor.coords()
    columns, template = _value_columns(values)
    with _open_text(path, "w") as stream:
        _write_rows(stream, "{} " * tensor.ndim + template + "\n",
                    [coords[:, m] + 1 for m in range(tensor.ndim)] + columns)


# ---------------------------------------------------------------------------------------
# coiter .npz
# ---------------------------------------------------------------------------------------

_NPZ_MAGIC = "coiter.npz_version"
_NPZ_VERSION = 1
# The level properties a user can configure; the others follow from these and the type.
_CONFIGURABLE = ("full", "ordered", "unique", "compact")
_LEVEL_TYPES = {level.name: level for level in (
    formats.dense, formats.compressed, formats.singleton, formats.hashed, formats.range,
    formats.offset)}


def _describe_format(fmt):
    """The format as plain arrays: named formats by name, others level by level."""
    levels = fmt.levels
    return {
        "format.text": np.array(str(fmt)),  # for people inspecting the file
        "format.name": np.array(fmt.name or ""),
        "format.order": np.array(fmt.order, dtype=np.int64),
        "format.block_shape": np.array(fmt.block_shape or (), dtype=np.int64),
        "format.mode_order": np.array(fmt.mode_order, dtype=np.int64),
        "format.level_types": np.array([level.name for level in levels], dtype=np.str_),
        "format.level_properties": np.array(
            [[level.properties[p] for p in _CONFIGURABLE] for level in levels],
            dtype=bool).reshape(len(levels), len(_CONFIGURABLE)),
        "format.level_buckets": np.array([level.buckets or 0 for level in levels],
                                         dtype=np.int64),
    }


def _format_from_description(description):
    """Rebuild the Format that :func:`_describe_format` described."""
    name = str(description["format.name"])
    order = int(description["format.order"])
    if name == "bcsr":
        return bcsr(tuple(int(b) for b in description["format.block_shape"]))
    if name:
        return as_format(name, order)
    levels = [_level_type(str(kind), properties, int(buckets)) for kind, properties, buckets
              in zip(description["format.level_types"],
                     description["format.level_properties"],
                     description["format.level_buckets"])]
    return Format(levels, mode_order=[int(m) for m in description["format.mode_order"]])


def _level_type(kind, properties, buckets):
    base = _LEVEL_TYPES.get(kind)
    if base is None:
        raise FormatError(f"unknown level type {kind!r}")
    # Only properties that differ from the type's defaults: the others may not be
    # configurable, and configuring them would raise.
    changes = {p: bool(v) for p, v in zip(_CONFIGURABLE, properties)
               if bool(v) != base.properties[p]}
    if buckets:
        changes["buckets"] = buckets
    return base(**changes) if changes else base


def _npz_pieces(archive, path):
    """The arguments of Tensor._from_level_arrays, read from an open coiter archive."""
    if _NPZ_MAGIC not in archive.files:
        raise ParseError(f"{path} is not a coiter .npz file (it has no {_NPZ_MAGIC!r} entry); "
                         "SciPy sparse .npz files load with scipy.sparse.load_npz and "
                         "coiter.asarray", path=path)
    try:
        version = archive[_NPZ_MAGIC]
        if version.dtype.kind not in "iu" or version.ndim != 0 or version > _NPZ_VERSION:
            raise ParseError(f"{path}: unsupported coiter .npz file version {version} (this "
                             f"coiter reads up to version {_NPZ_VERSION})", path=path)
        index_dtype = str(archive["index_dtype"])
        if index_dtype not in ("int32", "int64"):
            raise ParseError(f"{path}: index dtype {index_dtype!r} is neither int32 nor int64",
                             path=path)
        description = {key: archive[key] for key in archive.files if key.startswith("format.")}
        fmt = _format_from_description(description)
        levels = len(description["format.level_types"])
        arrays = [{} for _ in range(levels)]
        parameters = [{} for _ in range(levels)]
        for key in archive.files:
            if key.startswith("level"):
                _store_level_entry(key, archive[key], arrays, parameters, path)
        return fmt, archive["shape"], index_dtype, arrays, parameters, archive["values"]
    except ParseError:
        raise  # already precise; must not be re-wrapped as a generic ValueError below
    except KeyError as error:
        raise ParseError(f"{path}: incomplete coiter .npz file, missing {error}",
                         path=path) from error
    except (ValueError, TypeError) as error:  # object arrays, non-numeric entries
        raise ParseError(f"{path}: malformed coiter .npz file ({error})", path=path) from error


def _store_level_entry(key, value, arrays, parameters, path):
    """File the entry ``level<k>.array.<name>`` or ``level<k>.param.<name>``."""
    match = re.fullmatch(r"level(\d+)\.(array|param)\.(\w+)", key)
    if match is None or int(match.group(1)) >= len(arrays):
        raise ParseError(f"{path}: unexpected entry {key!r} in a coiter .npz file", path=path)
    level, kind, name = int(match.group(1)), match.group(2), match.group(3)
    if kind == "array":
        arrays[level][name] = value
    else:
        parameters[level][name] = int(value)


def _read_npz(path, format, shape, dtype):
    tensor = load(path)
    if shape is not None and shape != tensor.shape:
        raise ShapeError(f"{path} holds a tensor of shape {tensor.shape}, not shape={shape}")
    if dtype is not None and dtype != tensor.dtype:
        levels = tensor.levels
        tensor = Tensor._from_level_arrays(
            tensor.format, tensor.shape, tensor.index_dtype, [lv.arrays for lv in levels],
            [lv.parameters for lv in levels], _cast_values(tensor.values, dtype, path))
    return tensor if format is None else tensor.asformat(format)
