"""Text tables shared by the Matrix Market and FROSTT formats.

Opening (optionally gzipped) text files, parsing their bodies with :func:`numpy.loadtxt`,
finding the line to name in a :class:`~coiter.ParseError` when a check fails, checking a
requested shape against the file's extents, packing the entries into a tensor, and writing
one line per entry in chunks.
"""

import gzip
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..creation import from_coords
from ..errors import FormatError, ParseError, ShapeError
from ..formats import FormatLike
from ..progress import SMALL_FILE_BYTES, Progress, progress
from ..tensor import Tensor

# Rows written (or values formatted) per chunk: bounds the memory of the text being built.
_WRITE_CHUNK = 100_000
# Lines read between two updates of a reading progress bar.
_PROGRESS_LINES = 65_536


def _open_text(path, mode="r"):
    # latin-1 decodes any byte, so odd bytes in comments never stop a read; a stray
    # byte in a data field still fails to parse as a number and is reported by line.
    opener = gzip.open if path.lower().endswith(".gz") else open
    return opener(path, mode + "t", encoding="latin-1", newline=None if mode == "r" else "\n")


def _parse_error(path, line, what):
    return ParseError(f"{path}, line {line}: {what}", line=line, path=path)


def _padded_shape(
    path: str, found: tuple[int, ...], shape: tuple[int, ...] | None, what: str
) -> tuple[int, ...]:
    """``shape`` when it holds ``found`` (the file's extents), else ShapeError."""
    if shape is None:
        return found
    if len(shape) != len(found):
        raise ShapeError(
            f"{path} holds an order-{len(found)} tensor but shape={shape} has {len(shape)} modes"
        )
    for mode, (asked, needed) in enumerate(zip(shape, found)):
        if asked < needed:
            raise ShapeError(
                f"{path}: shape={shape} is smaller than the file's {what} {found} in mode {mode}"
            )
    return shape


def _tensor_of_entries(
    path: str,
    coords: NDArray[np.int64],
    values: NDArray[Any],
    shape: tuple[int, ...],
    format: FormatLike,
) -> Tensor:
    """The tensor holding a file's entries. Packing refuses a declared size too large for
    the format (a dense level over a huge mode, or the pos array under it); the error then
    names the file as well as the level and array."""
    try:
        return from_coords(coords, values, shape, format=format)
    except ShapeError as error:
        raise ShapeError(
            f'{path}: {error}; format="coo" stores only the file\'s entries'
        ) from error
    except FormatError as error:
        raise FormatError(f"{path}: {error}") from error


# -- table parsing ----------------------------------------------------------------------

# The number syntax numpy.loadtxt accepts (ASCII digits only, no "_" separators).
_INT_TOKEN = re.compile(r"[+-]?\d+", re.ASCII)
_FLOAT_TOKEN = re.compile(
    r"[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)", re.IGNORECASE | re.ASCII
)


@dataclass(frozen=True)
class _Body:
    """Where the data lines of a text file start, and how they are read."""

    path: str
    first_line: int  # 1-based number of the first line that may hold data
    columns: tuple[tuple[str, Any], ...]  # ((label, dtype), ...) of the fields of a data line
    comment: str  # text from this character on is a comment


def _load_table(stream, body):
    """Parse the rest of ``stream`` (positioned at ``body.first_line``) into a structured
    array with one field per column; a malformed line raises ParseError naming it."""
    # A gzipped file's size says little about its text: its bar counts bytes without a total.
    size = None if body.path.lower().endswith(".gz") else os.path.getsize(body.path)
    quick = size is not None and size < SMALL_FILE_BYTES
    name = os.path.basename(body.path)
    try:
        with (
            progress(size, f"reading {name}", "B", small=quick) as bar,
            warnings.catch_warnings(),
        ):
            # A body without data lines is legal (an empty matrix); counts are checked later.
            warnings.filterwarnings("ignore", "loadtxt: input contained no data")
            return np.loadtxt(
                _reported_lines(stream, bar, size) if bar.shown else stream,
                dtype=np.dtype(list(body.columns)),
                comments=body.comment,
                ndmin=1,
            )
    except ValueError as error:
        _raise_malformed_line(body)
        raise ParseError(f"{body.path}: {error}", path=body.path) from error


def _reported_lines(stream: Iterable[str], bar: Progress, size: int | None) -> Iterator[str]:
    """The lines of ``stream``, reporting the characters read to ``bar`` as they go (latin-1:
    one character per byte); at the end the bar is filled to the file's ``size`` when known
    (the header read before, and "\r" dropped by newline translation, make up the rest)."""
    read = reported = 0
    for number, line in enumerate(stream, start=1):
        read += len(line)
        if number % _PROGRESS_LINES == 0:
            bar.update(read - reported)
            reported = read
        yield line
    bar.update((read if size is None else max(size, read)) - reported)


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
            raise _parse_error(
                body.path,
                number,
                f"expected {len(body.columns)} fields ({labels}), found {len(fields)}",
            )
        for position, (field, (label, dtype)) in enumerate(zip(fields, body.columns), 1):
            problem = _field_problem(field, dtype)
            if problem:
                raise _parse_error(
                    body.path, number, f"field {position} ({label}) {field!r} {problem}"
                )


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


# -- writing ----------------------------------------------------------------------------


def _write_rows(stream, template, columns):
    """Write ``template.format(*row)`` for the rows of ``columns`` (equal-length arrays),
    in chunks: Python's formatting gives shortest round-trip floats."""
    count = len(columns[0]) if columns else 0
    name = os.path.basename(stream.name) if isinstance(stream.name, str) else "file"
    with progress(count, f"writing {name}", "lines", small=count <= _WRITE_CHUNK) as bar:
        for start in range(0, count, _WRITE_CHUNK):
            chunk = [column[start : start + _WRITE_CHUNK].tolist() for column in columns]
            stream.writelines(map(template.format, *chunk))
            bar.update(len(chunk[0]))


def _write_entries(stream, coords, values):
    """Write one line per entry: its 1-based coordinates, then its value columns (the
    Matrix Market coordinate layout and FROSTT share this line syntax)."""
    columns, template = _value_columns(values)
    order = coords.shape[1]
    _write_rows(
        stream, "{} " * order + template + "\n", [coords[:, m] + 1 for m in range(order)] + columns
    )


def _value_columns(values):
    """The value columns to write and their format template."""
    if values.dtype.kind == "c":
        return [values.real, values.imag], "{!r} {!r}"
    if values.dtype.kind == "f":
        return [values], "{!r}"
    wide = np.uint64 if values.dtype.kind == "u" else np.int64
    return [values.astype(wide)], "{}"
