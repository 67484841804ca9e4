"""Matrix Market (``.mtx``, ``.mtx.gz``) files: matrices in coordinate or array layout."""

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import _core
from ..errors import ShapeError
from ..formats import FormatLike, is_all_dense
from ..tensor import Tensor
from .casting import _cast_values
from .text_table import (
    _INT_TOKEN,
    _Body,
    _first_out_of_range,
    _last_line,
    _line_of_entry,
    _load_table,
    _open_text,
    _padded_shape,
    _parse_error,
    _tensor_of_columns,
    _value_columns,
    _write_entries,
    _write_rows,
)

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
    entries: int  # data lines the size line promises
    size_line: int  # line number of the size line


def _read_matrix_market(
    path: str, format: FormatLike | None, shape: tuple[int, ...] | None, dtype: np.dtype[Any] | None
) -> Tensor:
    with _open_text(path) as stream:
        header = _read_mm_header(stream, path)
    body = _Body(path, header.size_line + 1, _mm_columns(header, dtype), "%")
    if header.layout == "coordinate":
        body = _parsed_coordinates(body, header)
    table = _load_table(body)
    _check_entry_count(body, len(table), header.entries, header.size_line)
    shape = _padded_shape(path, (header.rows, header.cols), shape, "declared size")
    if header.layout == "array":
        coords, values = _mm_array_entries(header, _mm_values(table, header, dtype))
        columns = [coords[:, 0], coords[:, 1]]
        default_format = "dense"
    else:
        columns, values = _mm_coordinate_entries(body, header, table, dtype)
        default_format = "csr"
    values = _cast_values(values, dtype, path)
    # The buckets are those of the declared rows (a padded shape has others), and mirrored
    # entries of a symmetric file are appended after them.
    bucketed = header.symmetry == "general" and shape[0] == header.rows
    buckets = table.buckets if bucketed else None
    return _tensor_of_columns(path, columns, values, shape, format or default_format, buckets)


def _parsed_coordinates(body: _Body, header: _MMHeader) -> _Body:
    """``body`` with its coordinates parsed straight into what packing takes: 0-based (base
    1), int32 when the declared size fits it (half the bytes to write and sort), and, for a
    general file, laid out in the coarse buckets of its rows that packing's sort starts from."""
    narrow = max(header.rows, header.cols) <= np.iinfo(np.int32).max
    index = np.dtype(np.int32 if narrow else np.int64)
    columns = tuple((label, index) for label, _ in body.columns[:2]) + body.columns[2:]
    bases = (1, 1) + (0,) * (len(body.columns) - 2)
    bucketed = header.symmetry == "general" and header.rows >= 1
    return replace(
        body, columns=columns, bases=bases, bucket_extent=header.rows if bucketed else None
    )


def _read_mm_header(stream, path):
    """Parse the banner, skip comments and blank lines, parse the size line."""
    banner = stream.readline()
    words = banner.split()
    if not words or words[0].lower() != "%%matrixmarket":
        raise _parse_error(path, 1, f"missing the Matrix Market banner '{_MM_BANNER}'")
    if len(words) != 5:
        raise _parse_error(path, 1, f"the banner must read '{_MM_BANNER}', got {banner.strip()!r}")
    obj, layout, field, symmetry = (word.lower() for word in words[1:])
    _check_word(path, "object", obj, ("matrix",))
    _check_word(path, "layout", layout, _MM_LAYOUTS)
    _check_word(path, "field", field, _MM_FIELDS)
    _check_word(path, "symmetry", symmetry, _MM_SYMMETRIES)
    if field == "pattern" and layout == "array":
        raise _parse_error(path, 1, "a pattern matrix has no values to list in the array layout")
    if field == "pattern" and symmetry == "skew-symmetric":
        raise _parse_error(path, 1, "a pattern matrix cannot be skew-symmetric")
    number, fields = _size_line(stream, path)
    expected = 3 if layout == "coordinate" else 2
    if len(fields) != expected or not all(
        _INT_TOKEN.fullmatch(f) and 0 <= int(f) < 2**63 for f in fields
    ):
        wanted = "rows columns entries" if layout == "coordinate" else "rows columns"
        raise _parse_error(
            path,
            number,
            f"bad size line {' '.join(fields)!r}: expected "
            f"{expected} integers in [0, 2**63) ({wanted})",
        )
    rows, cols = int(fields[0]), int(fields[1])
    if symmetry != "general" and rows != cols:
        raise _parse_error(path, number, f"a {symmetry} matrix must be square, got {rows} x {cols}")
    entries = int(fields[2]) if layout == "coordinate" else _array_entry_count(rows, cols, symmetry)
    return _MMHeader(
        layout, "real" if field == "double" else field, symmetry, rows, cols, entries, number
    )


def _check_word(path, what, word, allowed):
    if word not in allowed:
        raise _parse_error(
            path, 1, f"unknown Matrix Market {what} {word!r}; expected one of {', '.join(allowed)}"
        )


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
    coords = (
        (("row", np.dtype(np.int64)), ("column", np.dtype(np.int64)))
        if header.layout == "coordinate"
        else ()
    )
    if header.field == "pattern":
        return coords
    if header.field == "complex":
        return coords + (
            ("real part", np.dtype(np.float64)),
            ("imaginary part", np.dtype(np.float64)),
        )
    if header.field == "integer":
        # uint64 requested: parse as such so values above 2**63 survive (unless mirrored
        # entries get negated, which unsigned values cannot hold).
        unsigned = dtype is not None and dtype.kind == "u" and header.symmetry != "skew-symmetric"
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
        raise _parse_error(
            body.path,
            _last_line(body.path),
            f"the size line (line {size_line}) declares {declared} entries "
            f"but the file ends after {found}",
        )
    if found > declared:
        raise _parse_error(
            body.path,
            _line_of_entry(body, declared),
            f"entry {declared + 1} is beyond the {declared} entries the size "
            f"line (line {size_line}) declares",
        )


def _mm_coordinate_entries(body, header, table, dtype):
    """0-based coordinate columns (row, column) and values of a coordinate file parsed with
    ``_parsed_coordinates``' body, symmetric parts mirrored."""
    fits = len(table) == 0 or all(
        table.extremes[label][0] >= 1 and table.extremes[label][1] <= extent
        for label, extent in (("row", header.rows), ("column", header.cols))
    )
    if not fits:
        _raise_coordinate_outside(body.plain(), header)
    rows, cols = table["row"], table["column"]
    values = _mm_values(table, header, dtype)
    if header.symmetry == "general":
        return [rows, cols], values
    if header.symmetry == "skew-symmetric":
        diagonal = np.flatnonzero((rows == cols) & (values != 0))
        if diagonal.size:
            raise _parse_error(
                body.path,
                _line_of_entry(body, int(diagonal[0])),
                "a skew-symmetric matrix has a zero diagonal, but this entry on it is nonzero",
            )
    return _mirrored_columns(rows, cols, values, header.symmetry)


def _raise_coordinate_outside(body, header):
    """Raise the ParseError naming the first entry whose coordinate is outside the declared
    size, read again from the file as written (``body``: the int64, 1-based one)."""
    table = _load_table(body)
    coords = np.column_stack([table["row"], table["column"]]).reshape(-1, 2)
    outside = _first_out_of_range(coords, 1, (header.rows, header.cols))
    if outside is None:
        raise AssertionError(f"{body.path}: the parser's extremes disagree with its values")
    entry, mode = outside
    name, extent = ("row", header.rows) if mode == 0 else ("column", header.cols)
    raise _parse_error(
        body.path,
        _line_of_entry(body, entry),
        f"{name} coordinate {coords[entry, mode]} is outside 1..{extent}",
    )


def _mirrored(coords, values, symmetry):
    """Add the transposed twin of every off-diagonal entry of a symmetric file (coordinates
    as rows of ``coords``)."""
    (rows, cols), values = _mirrored_columns(coords[:, 0], coords[:, 1], values, symmetry)
    return np.column_stack([rows, cols]), values


def _mirrored_columns(rows, cols, values, symmetry):
    """Add the transposed twin of every off-diagonal entry of a symmetric file (coordinates
    as the columns ``rows`` and ``cols``)."""
    off = rows != cols
    return (
        [np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])],
        np.concatenate([values, _twin_values(values[off], symmetry)]),
    )


def _twin_values(values, symmetry):
    """The values of the transposed twins of entries holding ``values``: the same
    (symmetric), negated (skew-symmetric) or conjugated (hermitian)."""
    if symmetry == "skew-symmetric":
        return -values
    if symmetry == "hermitian":
        return np.conj(values)
    return values


def _mm_array_entries(header, values):
    """Coordinates and values of the nonzeros of an array (column-major) file."""
    n_rows, n_cols = header.rows, header.cols
    dense = np.zeros((n_rows, n_cols), dtype=values.dtype)
    if header.symmetry == "general":
        dense[...] = values.reshape(n_cols, n_rows).T
    else:
        # The lower triangle column by column: column j holds rows j.. (j+1.. if skew),
        # which is np.triu_indices' row-major order with the roles swapped.
        cols, rows = np.triu_indices(n_rows, k=1 if header.symmetry == "skew-symmetric" else 0)
        dense[rows, cols] = values
        off = rows != cols
        dense[cols[off], rows[off]] = _twin_values(values[off], header.symmetry)
    coords = np.argwhere(dense)
    return coords, dense[coords[:, 0], coords[:, 1]]


def _write_matrix_market(path: str, tensor: Tensor, symmetry: str) -> None:
    if tensor.ndim != 2:
        raise ShapeError(
            f"Matrix Market files hold matrices; this tensor has order "
            f"{tensor.ndim} (write it as .tns or .npz)"
        )
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
        _write_mm_header(stream, "coordinate", field, symmetry, f"{n_rows} {n_cols} {len(values)}")
        _write_entries(stream, coords, values)


def _write_mm_header(stream, layout, field, symmetry, size):
    stream.write(
        f"%%MatrixMarket matrix {layout} {field} {symmetry}\n"
        f"% written by coiter {_core.__version__}\n{size}\n"
    )


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
    if not (
        np.array_equal((cols * n_cols + rows)[transposed], keys)
        and np.array_equal(summed[transposed], summed)
    ):
        raise ValueError("symmetry='symmetric', but the matrix is not symmetric")
    lower = rows >= cols
    return np.column_stack([rows[lower], cols[lower]]), summed[lower]
