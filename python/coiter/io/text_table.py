"""Text tables shared by the Matrix Market and FROSTT formats.

Opening (optionally gzipped) text files, parsing their bodies with the core's parallel
parser (:func:`numpy.loadtxt` for one-token complex values, which it does not read), finding
the line to name in a :class:`~coiter.ParseError` when a check fails, checking a
requested shape against the file's extents, packing the entries into a tensor, and writing
one line per entry in chunks.
"""

import gzip
import io
import mmap
import os
import re
import warnings
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import _core
from ..dtypes import value_dtype
from ..errors import FormatError, ParseError, ShapeError
from ..formats import FormatLike, as_format
from ..progress import SMALL_FILE_BYTES, Progress, progress
from ..tensor import Tensor, pack

# Rows written (or values formatted) per chunk: bounds the memory of the text being built.
_WRITE_CHUNK = 100_000
# Lines read between two updates of a reading progress bar (NumPy's parser).
_PROGRESS_LINES = 65_536
# Bytes of a file handed to the core's parser at once: a reading progress bar moves after
# each block, and a gzip file's text is decompressed a block at a time. A mapped file read
# without a bar is parsed in one block, so its columns need no concatenation.
_BLOCK_BYTES = 64 << 20
# The fields the core's parser reads (one token each; a complex number in one token is not).
_NATIVE_FIELDS = ("int32", "int64", "uint64", "float64")


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
    """The tensor holding a file's entries, from their coordinates as rows of ``coords``."""
    return _tensor_of_columns(
        path, [coords[:, m] for m in range(coords.shape[1])], values, shape, format
    )


def _tensor_of_columns(
    path: str,
    columns: Sequence[NDArray[Any]],
    values: NDArray[Any],
    shape: tuple[int, ...],
    format: FormatLike,
    buckets: NDArray[np.int64] | None = None,
) -> Tensor:
    """The tensor holding a file's entries, from one column of 0-based coordinates per mode
    (int32 or int64, checked against ``shape`` by the packing; ``buckets``: laid out in mode
    0's coarse buckets, _Table.buckets). Packing refuses a declared size too large for the
    format (a dense level over a huge mode, or the pos array under it); the error then names
    the file as well as the level and array."""
    try:
        fmt = as_format(format, len(shape))
        values = values.astype(value_dtype(values.dtype), copy=False)
        # The columns are this read's own: the tensor keeps them rather than copies.
        return pack(fmt, shape, columns, values, adopt=True, mode_zero_buckets=buckets)
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
    # Per field, a number subtracted from the (signed integer) values as they are parsed; ()
    # for none. A narrowed (int32) coordinate field is only trusted once the table's extremes
    # show that its values fit.
    bases: tuple[int, ...] = ()
    # The extent of the first field's values (after its base): when the body is parsed in one
    # block, the entries are laid out in the coarse buckets of the first field that packing
    # sorts them by (_Table.buckets), sparing the sort a scatter into new columns. None: in
    # file order.
    bucket_extent: int | None = None

    def plain(self) -> "_Body":
        """This body with every integer field parsed as int64 and no bases: the values as the
        file writes them, which the line-by-line checks report."""
        columns = tuple(
            (label, np.dtype(np.int64) if dtype == np.int32 else dtype)
            for label, dtype in self.columns
        )
        return _Body(self.path, self.first_line, columns, self.comment)


@dataclass(frozen=True)
class _Table:
    """The fields of a body's data lines: ``table[label]`` is one column, ``len(table)`` the
    number of data lines, ``table.extremes[label]`` the least and greatest value of a signed
    integer field as the file writes it (before its base is subtracted; (0, -1) when there
    are no lines)."""

    columns: dict[str, NDArray[Any]]
    rows: int
    extremes: dict[str, tuple[int, int]]
    # Where each coarse bucket of the first field starts when the entries are laid out in them
    # (_Body.bucket_extent), else None: the entries are in file order.
    buckets: NDArray[np.int64] | None = None

    def __getitem__(self, label: str) -> NDArray[Any]:
        return self.columns[label]

    def __len__(self) -> int:
        return self.rows


def _load_table(body: _Body) -> _Table:
    """Parse the data lines of ``body.path`` (from ``body.first_line`` on) into a table with
    one column per field; a malformed line raises ParseError naming it."""
    # A gzipped file's size says little about its text: its bar counts bytes without a total.
    gzipped = body.path.lower().endswith(".gz")
    size = None if gzipped else os.path.getsize(body.path)
    quick = size is not None and size < SMALL_FILE_BYTES
    name = os.path.basename(body.path)
    with progress(size, f"reading {name}", "B", small=quick) as bar:
        if not _parsed_natively(body):
            with _open_text(body.path) as stream:
                for _ in range(body.first_line - 1):
                    stream.readline()
                return _numpy_table(
                    _reported_lines(stream, bar, size) if bar.shown else stream, body
                )
        one_block = not gzipped and not bar.shown
        with (
            (gzip.open if gzipped else open)(body.path, "rb") as stream,
            closing(
                _line_blocks(stream)
                if gzipped
                else _mapped_blocks(stream, None if one_block else _BLOCK_BYTES)
            ) as blocks,
        ):
            # Buckets are laid out within a block: blocks would each have their own.
            return _parsed_table(blocks, body, body.first_line - 1, bar, bucketed=one_block)


def _load_piece(text: str, body: _Body) -> _Table:
    """Parse ``text``, whole data lines of ``body.path`` from somewhere in its body, into a
    table; a malformed line raises ParseError naming the first one in the file."""
    if not _parsed_natively(body):
        return _numpy_table(io.StringIO(text), body)
    return _parsed_table([text.encode("latin-1")], body, None, None)


def _parsed_natively(body: _Body) -> bool:
    """Whether the core's parser reads every field (it reads no one-token complex number)."""
    return all(dtype.name in _NATIVE_FIELDS for _, dtype in body.columns)


def _parsed_table(
    blocks: Iterable[Any],
    body: _Body,
    skip_lines: int | None,
    bar: Progress | None,
    bucketed: bool = False,
) -> _Table:
    """Parse ``blocks`` (bytes-like, each ending at a line end but the last) with the core's
    parallel parser, the first ``skip_lines`` lines not read. ``skip_lines`` None: the blocks
    are a piece of the body whose line numbers are unknown, so a malformed line is found again
    in the file to be named. ``bucketed``: ``blocks`` is one block, whose entries are laid out
    in buckets when ``body.bucket_extent`` asks for it."""
    fields = [dtype.name for _, dtype in body.columns]
    bases = list(body.bases) or None
    bucket_extent = body.bucket_extent if bucketed else None
    buckets = None
    parts: list[list[NDArray[Any]]] = [[] for _ in fields]
    extremes: dict[str, tuple[int, int]] = {}
    line_ends = 0  # in the blocks before this one
    for block in blocks:
        skip = max(0, (skip_lines or 0) - line_ends)
        columns, block_line_ends, bad_line, bad_text, block_extremes, buckets = (
            _core.parse_text_entries(block, fields, body.comment, skip, bases, bucket_extent)
        )
        if bad_line:
            if skip_lines is None:
                _raise_malformed_line(body)
            _raise_line_problem(body, line_ends + bad_line, bad_text.decode("latin-1"))
        for part, column in zip(parts, columns):
            part.append(column)
        for (label, _), pair in zip(body.columns, block_extremes):
            if pair is not None and len(columns[0]):
                low, high = extremes.get(label, pair)
                extremes[label] = (min(low, pair[0]), max(high, pair[1]))
        line_ends += block_line_ends
        if bar is not None:
            bar.update(len(block))
    arrays = [
        (part[0] if len(part) == 1 else np.concatenate(part)) if part else np.zeros(0, dtype)
        for part, (_, dtype) in zip(parts, body.columns)
    ]
    rows = len(arrays[0]) if arrays else 0
    table = {label: array for (label, _), array in zip(body.columns, arrays)}
    return _Table(table, rows, _signed_extremes(body, extremes), buckets)


def _signed_extremes(body: _Body, found: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """``found`` with (0, -1) for the signed integer fields it lacks (no entries)."""
    return {label: found.get(label, (0, -1)) for label, dtype in body.columns if dtype.kind == "i"}


def _mapped_blocks(stream: Any, block_bytes: int | None) -> Generator[memoryview, None, None]:
    """The bytes of the file open as ``stream``, memory-mapped (not copied), in blocks of
    about ``block_bytes`` (None: one block) that end just past a "\\n" (all but the last). A
    block is valid until the next is asked for."""
    size = os.fstat(stream.fileno()).st_size
    if size == 0:
        return  # nothing to map
    with (
        mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
        memoryview(mapped) as view,
    ):
        start = 0
        while start < size:
            end = size if block_bytes is None else min(start + block_bytes, size)
            if end < size:
                cut = mapped.rfind(b"\n", start, end) + 1
                # A line longer than a block: the block runs to its end.
                end = cut if cut > start else (mapped.find(b"\n", end) + 1 or size)
            with view[start:end] as block:
                yield block
            start = end


def _line_blocks(stream: Any) -> Generator[memoryview, None, None]:
    """The bytes of a binary ``stream`` (a gzip file's, which cannot be mapped) in blocks of
    about ``_BLOCK_BYTES`` that end just past a "\\n" (all but the last), so that no line is
    cut in two. One buffer is reused: a block is valid until the next is asked for."""
    buffer = bytearray(_BLOCK_BYTES)
    kept = 0  # bytes of the line cut at the end of the last block, moved to the front
    while True:
        if kept == len(buffer):  # a line longer than the buffer: a new one twice as large
            buffer = buffer + bytes(len(buffer))
        read = stream.readinto(memoryview(buffer)[kept:])
        if not read:
            if kept:
                yield memoryview(buffer)[:kept]
            return
        end = kept + read
        cut = buffer.rfind(b"\n", 0, end) + 1
        if cut == 0:
            kept = end
            continue
        yield memoryview(buffer)[:cut]
        buffer[: end - cut] = buffer[cut:end]
        kept = end - cut


def _numpy_table(lines: Iterable[str], body: _Body) -> _Table:
    """Parse ``lines`` with :func:`numpy.loadtxt`, for the fields the core does not parse."""
    try:
        with warnings.catch_warnings():
            # A body without data lines is legal (an empty matrix); counts are checked later.
            warnings.filterwarnings("ignore", "loadtxt: input contained no data")
            table = np.loadtxt(
                lines, dtype=np.dtype(list(body.plain().columns)), comments=body.comment, ndmin=1
            )
    except ValueError as error:
        _raise_malformed_line(body)
        raise ParseError(f"{body.path}: {error}", path=body.path) from error
    columns: dict[str, NDArray[Any]] = {}
    extremes: dict[str, tuple[int, int]] = {}
    for position, (label, dtype) in enumerate(body.columns):
        column = table[label]
        if dtype.kind == "i" and len(column):
            extremes[label] = (int(column.min()), int(column.max()))
        base = body.bases[position] if body.bases else 0
        columns[label] = (column - base if base else column).astype(dtype, copy=False)
    return _Table(columns, len(table), _signed_extremes(body, extremes))


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
    """Find the first malformed data line of the body and raise a ParseError naming it."""
    for number, fields in _data_lines(body):
        _check_line(body, number, fields)


def _raise_line_problem(body: _Body, number: int, text: str) -> None:
    """Raise the ParseError for line ``number`` holding ``text``, which the parser refused."""
    _check_line(body, number, text.split(body.comment, 1)[0].split())
    raise _parse_error(body.path, number, f"cannot parse {text!r}")  # the checks disagree


def _check_line(body, number, fields):
    """Raise a ParseError naming what is wrong with the ``fields`` of data line ``number``."""
    body = body.plain()  # the file's own syntax: a narrowed field is parsed as an int64
    labels = ", ".join(label for label, _ in body.columns)
    if len(fields) != len(body.columns):
        raise _parse_error(
            body.path,
            number,
            f"expected {len(body.columns)} fields ({labels}), found {len(fields)}",
        )
    for position, (field, (label, dtype)) in enumerate(zip(fields, body.columns), 1):
        problem = _field_problem(field, dtype)
        if problem:
            raise _parse_error(body.path, number, f"field {position} ({label}) {field!r} {problem}")


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
    uppers = np.broadcast_to(upper, coords.shape[1:])
    if all(  # the common case, told by reductions of each column (fast, no temporaries)
        len(column) == 0 or (column.min() >= lower and column.max() <= bound)
        for column, bound in zip(coords.T, uppers)
    ):
        return None
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
