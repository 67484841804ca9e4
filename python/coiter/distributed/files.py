"""Reading Matrix Market and FROSTT files in parallel on the workers.

The file must be readable by the workers at the same path (a shared file system, or one
machine). Its data lines are cut into byte ranges, one *piece* per worker; each piece is parsed
by a task where it runs (each range starts at the first line that begins in it), symmetric
entries mirrored there. The pieces then give the shape (FROSTT), the entry counts per
coordinate of the partitioned mode (summed by a tree of tasks), and the block bounds; each
piece is split by block, and each block is packed from its parts of every piece on its worker.
The blocks' lineage is the file: a block lost with its worker is read again.

Files that cannot be cut into byte ranges (gzip-compressed, ``.npz``, Matrix Market's dense
``array`` layout) are read whole by one task and then cut on the workers.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
from distributed import Client, Future
from numpy.typing import DTypeLike, NDArray

from ..creation import checked_shape
from ..dtypes import value_dtype
from ..errors import ParseError, ShapeError
from ..formats import Format, FormatLike, FormatState, as_format, format_from_state, format_state
from ..io import _file_kind
from ..io import read as read_whole
from ..io.casting import _cast_values
from ..io.frostt import _first_frostt_line, _frostt_value_dtype
from ..io.matrix_market import _mirrored, _mm_columns, _mm_values, _MMHeader, _read_mm_header
from ..io.text_table import (
    _Body,
    _first_out_of_range,
    _load_piece,
    _open_text,
    _padded_shape,
    _parse_error,
    _tensor_of_entries,
)
from ..shapes import ShapeLike
from ..tensor import Tensor
from .blocks import block_shape
from .bounds import (
    bounds_from_weights,
    check_balance,
    check_bounds,
    check_parts,
    entry_bytes,
    uniform_bounds,
)
from .cluster import resolve_client, round_robin, worker_addresses
from .partition import partition_future
from .partitioned import PartitionedTensor

# Entry counts per coordinate are kept exactly up to this many coordinates; a longer mode is
# counted in this many bins of equal width (its cuts then fall on bin edges).
_MAX_BINS = 1 << 22
# No piece smaller than this (bytes of data lines), so small files are not cut into slivers.
_MIN_PIECE_BYTES = 1 << 16

# What a task makes of one byte range of a file: the entries' coordinates ((n, order), 0-based),
# their values, and how many data lines the range held.
_Piece: TypeAlias = tuple[NDArray[np.int64], NDArray[Any], int]
# A piece's entries that fall in one block: coordinates and values.
_Entries: TypeAlias = tuple[NDArray[np.int64], NDArray[Any]]


def read(
    path: str | os.PathLike[str],
    mode: int = 0,
    parts: int | None = None,
    balance: str = "nnz",
    bounds: Sequence[int] | None = None,
    *,
    format: FormatLike | None = None,
    shape: ShapeLike | None = None,
    dtype: DTypeLike | None = None,
    client: Client | None = None,
    workers: Sequence[str] | None = None,
    pieces: int | None = None,
    name: str | None = None,
) -> PartitionedTensor:
    """Read a Matrix Market (``.mtx``) or FROSTT (``.tns``) file in parallel on the workers,
    partitioned along ``mode``.

    Parameters
    ----------
    path : str or os.PathLike
        A path the workers can read (``.mtx``, ``.tns``; ``.gz`` and ``.npz`` are read whole
        by one worker, then cut).
    mode, parts, balance, bounds
        As for :func:`partition`.
    format, shape, dtype
        As for ``ct.read`` (``"csr"`` by default for Matrix Market, ``"coo"`` for FROSTT).
    client, workers, name
        As for :func:`partition`.
    pieces : int, optional
        The number of byte ranges parsed in parallel (by default one per worker).

    Raises
    ------
    ParseError
        The file is malformed (the message names the line).
    ShapeError
        As for ``ct.read`` and :func:`partition`.
    """
    client = resolve_client(client)
    path = os.fspath(path)
    kind = _file_kind(path)
    dtype = None if dtype is None else value_dtype(dtype, f"read({path!r})")
    shape = None if shape is None else checked_shape(shape)
    if balance is not None and bounds is None:
        check_balance(balance)
    name = name or os.path.basename(path).split(".")[0]
    described = client.submit(_describe, path, kind, pure=False).result()
    if described is None:  # read whole: gzip, npz, dense Matrix Market, empty FROSTT
        whole = client.submit(read_whole, path, format, shape, dtype, pure=False)
        whole_shape, whole_dtype, fmt_state = client.submit(_kind_of, whole, pure=False).result()
        whole_format = as_format(format_from_state(fmt_state), len(whole_shape))
        return partition_future(
            client,
            whole,
            whole_shape,
            whole_dtype,
            whole_format,
            mode,
            parts,
            balance,
            bounds,
            workers,
            name,
        )
    data_start, data_end, first_line, header, order = described
    fmt = as_format(format or ("csr" if kind == "mtx" else "coo"), order)
    count = pieces if pieces is not None else len(worker_addresses(client, workers))
    count = (
        max(1, min(count, (data_end - data_start) // _MIN_PIECE_BYTES + 1))
        if pieces is None
        else count
    )
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"pieces must be a positive integer, not {pieces!r}")
    cuts = [data_start + (data_end - data_start) * k // count for k in range(count + 1)]
    targets = round_robin(client, count, workers)
    restrict = {"allow_other_workers": workers is None}
    piece_futures = [
        client.submit(
            _read_piece,
            path,
            header,
            first_line,
            data_start,
            order,
            cuts[k],
            cuts[k + 1],
            dtype,
            workers=[targets[k]],
            **restrict,
            pure=False,
        )
        for k in range(count)
    ]
    summaries = client.gather(
        [client.submit(_summary, piece, pure=False) for piece in piece_futures]
    )
    shape = _file_shape(path, header, summaries, shape, order)
    if not -order <= mode < order:
        raise ShapeError(f"mode {mode} is not a mode of the order-{order} tensor in {path}")
    mode %= order
    extent = shape[mode]
    values_dtype = np.dtype(summaries[0][2])
    if bounds is not None:
        bounds = check_bounds(bounds, extent, f"mode {mode} of {path}")
    else:
        parts = (
            max(1, min(len(worker_addresses(client, workers)), extent))
            if parts is None
            else check_parts(parts, extent, f"mode {mode} of {path}")
        )
        if balance == "coords" or parts == 1:
            bounds = uniform_bounds(extent, parts)
        else:
            bounds = _balanced(
                client, piece_futures, mode, extent, parts, balance, fmt, values_dtype
            )
    block_targets = round_robin(client, len(bounds) - 1, workers)
    splits = [
        client.submit(_split_piece, piece, mode, bounds, pure=False) for piece in piece_futures
    ]
    state = format_state(fmt)
    blocks = []
    for b, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        parts_of_block = [client.submit(operator.getitem, split, b, pure=False) for split in splits]
        blocks.append(
            client.submit(
                _assemble_block,
                path,
                state,
                block_shape(shape, mode, lo, hi),
                mode,
                lo,
                name,
                *parts_of_block,
                workers=[block_targets[b]],
                **restrict,
                pure=False,
            )
        )
    return PartitionedTensor(
        blocks, mode, bounds, shape, values_dtype, fmt, client, name, block_targets
    )


# -- tasks ---------------------------------------------------------------------------------


def _kind_of(tensor: Tensor) -> tuple[tuple[int, ...], np.dtype[Any], FormatState]:
    return tensor.shape, tensor.dtype, format_state(tensor.format)


def _line_start(path: str, line: int) -> int:
    """The byte offset at which the 1-based ``line`` begins."""
    with open(path, "rb") as stream:
        for _ in range(line - 1):
            stream.readline()
        return stream.tell()


def _describe(path: str, kind: str) -> tuple[int, int, int, _MMHeader | None, int] | None:
    """(data start byte, file size, first data line, header, order) of a text file that can be
    read in byte ranges, or None when it is read whole."""
    if path.lower().endswith(".gz") or kind == "npz":
        return None
    if kind == "mtx":
        with _open_text(path) as stream:
            header = _read_mm_header(stream, path)
        if header.layout == "array":
            return None
        first_line = header.size_line + 1
        return _line_start(path, first_line), os.path.getsize(path), first_line, header, 2
    first = _first_frostt_line(path)
    if first is None:
        return None
    number, field_count = first
    if field_count < 2:
        raise _parse_error(path, number, "a FROSTT line needs at least one coordinate and a value")
    return _line_start(path, number), os.path.getsize(path), number, None, field_count - 1


def _piece_text(path: str, begin: int, end: int, data_start: int) -> tuple[str, int]:
    """The lines that begin in bytes [begin, end) of the file, and the offset of the first."""
    with open(path, "rb") as stream:
        if begin > data_start:
            stream.seek(begin - 1)
            if stream.read(1) != b"\n":
                stream.readline()  # the line under way belongs to the piece before
        else:
            stream.seek(begin)
        start = stream.tell()
        data = stream.read(max(0, end - start)) if start < end else b""
        if data and not data.endswith(b"\n"):
            data += stream.readline()  # finish the last line that began in the range
    return data.decode("latin-1"), start


def _read_piece(
    path: str,
    header: _MMHeader | None,
    first_line: int,
    data_start: int,
    order: int,
    begin: int,
    end: int,
    dtype: np.dtype[Any] | None,
) -> _Piece:
    """(coords (n, order) int64 0-based, values, data lines) of one byte range of the file: a
    Matrix Market file's with its ``header``, a FROSTT file's with None."""
    text, start = _piece_text(path, begin, end, data_start)
    if header is not None:
        body = _Body(path, first_line, _mm_columns(header, dtype), "%")
    else:
        columns = tuple((f"mode {m + 1} coordinate", np.dtype(np.int64)) for m in range(order))
        body = _Body(path, first_line, columns + (("value", _frostt_value_dtype(dtype)),), "#")
    table = _load_piece(text, body)  # a malformed line: ParseError naming it
    lines = len(table)
    labels = [label for label, _ in body.columns[:order]]
    coords = np.column_stack([table[label] for label in labels]).reshape(-1, order).astype(np.int64)
    upper = (header.rows, header.cols) if header is not None else np.iinfo(np.int64).max
    outside = _first_out_of_range(coords, 1, upper)
    if outside is not None:
        entry, m = outside
        line = _line_of_piece_entry(path, start, text, entry, body.comment)
        if header is not None:
            what, extent = ("row", header.rows) if m == 0 else ("column", header.cols)
            raise _parse_error(
                path, line, f"{what} coordinate {coords[entry, m]} is outside 1..{extent}"
            )
        raise _parse_error(
            path,
            line,
            f"mode {m + 1} coordinate {coords[entry, m]} is below 1 (FROSTT "
            "coordinates are 1-based)",
        )
    coords -= 1
    if header is not None:
        values = _mm_values(table, header, dtype)
        if header.symmetry == "skew-symmetric":
            diagonal = np.flatnonzero((coords[:, 0] == coords[:, 1]) & (values != 0))
            if diagonal.size:
                line = _line_of_piece_entry(path, start, text, int(diagonal[0]), body.comment)
                raise _parse_error(
                    path,
                    line,
                    "a skew-symmetric matrix has a zero diagonal, but this entry on it is nonzero",
                )
        if header.symmetry != "general":
            coords, values = _mirrored(coords, values, header.symmetry)
    else:
        values = np.ascontiguousarray(table["value"])
    values = _cast_values(values, dtype, path)
    return coords, values, lines


def _line_of_piece_entry(path: str, start: int, text: str, entry: int, comment: str) -> int:
    """The line number of the ``entry``-th data line of a piece beginning at byte ``start``
    (an error path: the lines before the piece are counted then)."""
    with open(path, "rb") as stream:
        line = stream.read(start).count(b"\n") + 1
    seen = 0
    for offset, text_line in enumerate(text.splitlines()):
        if text_line.split(comment, 1)[0].split():
            if seen == entry:
                return line + offset
            seen += 1
    raise AssertionError(f"{path}: piece at byte {start} has no data line {entry}")


def _summary(piece: _Piece) -> tuple[int, NDArray[np.int64] | None, np.dtype[Any]]:
    """(data lines, largest coordinate per mode or None, value dtype) of a piece."""
    coords, values, lines = piece
    largest = coords.max(axis=0) if len(coords) else None
    return lines, largest, values.dtype


def _file_shape(
    path: str,
    header: _MMHeader | None,
    summaries: Sequence[tuple[int, NDArray[np.int64] | None, np.dtype[Any]]],
    shape: tuple[int, ...] | None,
    order: int,
) -> tuple[int, ...]:
    lines = sum(s[0] for s in summaries)
    if header is not None:  # Matrix Market
        if lines != header.entries:
            raise ParseError(
                f"{path}: the size line (line {header.size_line}) declares {header.entries} "
                f"entries but the file holds {lines}",
                path=path,
            )
        return _padded_shape(path, (header.rows, header.cols), shape, "declared size")
    largest = [s[1] for s in summaries if s[1] is not None]
    extents = tuple(int(e) + 1 for e in np.max(largest, axis=0))
    if shape is not None and len(shape) == order:
        for m, (asked, needed) in enumerate(zip(shape, extents)):
            if asked < needed:
                raise ShapeError(
                    f"{path}: mode {m + 1} coordinate {needed} is outside shape={shape} "
                    f"(extent {asked})"
                )
    return _padded_shape(path, extents, shape, "largest coordinates")


def _piece_counts(piece: _Piece, mode: int, width: int, bins: int) -> np.ndarray:
    coords = piece[0]
    return np.bincount(coords[:, mode] // width, minlength=bins).astype(np.int64)


def _weights_bounds(
    counts: np.ndarray, width: int, extent: int, parts: int, per_entry: int, per_row: int
) -> tuple[int, ...]:
    """Bounds from the entries per coordinate (or per bin of ``width`` coordinates)."""
    weights = counts * per_entry + per_row * width if (per_entry, per_row) != (1, 0) else counts
    cuts = np.asarray(bounds_from_weights(weights, parts), dtype=np.int64) * width
    cuts[-1] = extent
    return tuple(int(c) for c in np.minimum(cuts, extent))


def _balanced(
    client: Client,
    pieces: Sequence[Future[_Piece]],
    mode: int,
    extent: int,
    parts: int,
    balance: str,
    fmt: Format,
    dtype: np.dtype[Any],
) -> tuple[int, ...]:
    """Bounds balanced on the entries per coordinate of all pieces, counted and summed on the
    workers (only the bounds come back)."""
    width = max(1, -(-extent // _MAX_BINS))
    bins = -(-extent // width)
    level = [client.submit(_piece_counts, piece, mode, width, bins, pure=False) for piece in pieces]
    while len(level) > 1:
        paired = [
            client.submit(np.add, level[k], level[k + 1], pure=False)
            for k in range(0, len(level) - 1, 2)
        ]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    if balance == "nnz":
        per_entry, per_row = 1, 0
    else:
        index = np.int64 if extent > np.iinfo(np.int32).max else np.int32
        per_entry, per_row = entry_bytes(fmt, dtype, index)
        per_row = per_row if fmt.mode_order[0] == mode else 0
    return client.submit(
        _weights_bounds, level[0], width, extent, parts, per_entry, per_row, pure=False
    ).result()


def _split_piece(piece: _Piece, mode: int, bounds: Sequence[int]) -> list[_Entries]:
    """The entries of a piece, per block."""
    coords, values, _ = piece
    block_of = np.searchsorted(
        np.asarray(bounds[1:-1], dtype=np.int64), coords[:, mode], side="right"
    )
    order = np.argsort(block_of, kind="stable")
    starts = np.searchsorted(block_of[order], np.arange(len(bounds)))
    return [
        (coords[order[starts[b] : starts[b + 1]]], values[order[starts[b] : starts[b + 1]]])
        for b in range(len(bounds) - 1)
    ]


def _assemble_block(
    path: str,
    fmt_state: FormatState,
    shape: tuple[int, ...],
    mode: int,
    lo: int,
    name: str | None,
    *parts: _Entries,
) -> Tensor:
    """A block packed from its entries in every piece (duplicates summed, as ct.read does)."""
    coords = (
        np.concatenate([c for c, _ in parts])
        if parts
        else np.zeros((0, len(shape)), dtype=np.int64)
    )
    values = np.concatenate([v for _, v in parts])
    coords[:, mode] -= lo
    block = _tensor_of_entries(path, coords, values, shape, format_from_state(fmt_state))
    block.name = name
    return block
