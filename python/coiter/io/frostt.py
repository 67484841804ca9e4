"""FROSTT (``.tns``, ``.tns.gz``) files: one ``i j k ... value`` line per entry, any order."""

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..formats import FormatLike
from ..tensor import Tensor
from .casting import _cast_values
from .text_table import (
    _Body,
    _data_lines,
    _first_out_of_range,
    _line_of_entry,
    _load_table,
    _open_text,
    _padded_shape,
    _parse_error,
    _Table,
    _tensor_of_columns,
    _tensor_of_entries,
    _write_entries,
)


def _read_frostt(
    path: str, format: FormatLike | None, shape: tuple[int, ...] | None, dtype: np.dtype[Any] | None
) -> Tensor:
    first = _first_frostt_line(path)
    if first is None:
        if shape is None:
            raise ShapeError(f"{path} holds no entries, so its shape is unknown: pass shape=")
        no_values = np.zeros(0, dtype=dtype or np.float64)
        return _tensor_of_entries(
            path, np.zeros((0, len(shape)), dtype=np.int64), no_values, shape, format or "coo"
        )
    number, field_count = first
    if field_count < 2:
        raise _parse_error(path, number, "a FROSTT line needs at least one coordinate and a value")
    order = field_count - 1
    labels = tuple(f"mode {m + 1} coordinate" for m in range(order))
    value = ("value", _frostt_value_dtype(dtype))
    plain = _Body(
        path, number, tuple((label, np.dtype(np.int64)) for label in labels) + (value,), "#"
    )
    table = _load_table(_parsed_coordinates(plain, np.int32))
    if not _coordinates_fit(table, labels, np.iinfo(np.int64).max):
        _raise_coordinate_problem(plain, order, shape)
    if not _coordinates_fit(table, labels, np.iinfo(np.int32).max):
        # A coordinate beyond int32 (only a 0-based int64 column holds it): read again so.
        table = _load_table(_parsed_coordinates(plain, np.int64))
    extents = tuple(table.extremes[label][1] for label in labels)
    if shape is not None and len(shape) == order and not _coordinates_fit(table, labels, shape):
        _raise_coordinate_problem(plain, order, shape)
    shape = _padded_shape(path, extents, shape, "largest coordinates")
    values = _cast_values(np.ascontiguousarray(table["value"]), dtype, path)
    columns = [table[label] for label in labels]
    return _tensor_of_columns(path, columns, values, shape, format or "coo")


def _parsed_coordinates(plain: _Body, index: type) -> _Body:
    """``plain`` (int64 coordinates as written) with its coordinates parsed straight into
    what packing takes: 0-based (base 1) ``index`` integers."""
    order = len(plain.columns) - 1
    columns = tuple((label, np.dtype(index)) for label, _ in plain.columns[:order])
    return replace(plain, columns=columns + plain.columns[order:], bases=(1,) * order + (0,))


def _coordinates_fit(table: _Table, labels: tuple[str, ...], upper: Any) -> bool:
    """Whether every coordinate of the table (as written, 1-based) is in 1..upper (per mode,
    or the same for all); the parser's extremes tell, without a pass over the columns."""
    uppers = np.broadcast_to(upper, (len(labels),))
    return len(table) == 0 or all(
        table.extremes[label][0] >= 1 and table.extremes[label][1] <= bound
        for label, bound in zip(labels, uppers.tolist())
    )


def _raise_coordinate_problem(plain: _Body, order: int, shape: tuple[int, ...] | None) -> None:
    """Raise the error naming the first coordinate below 1, or else outside ``shape``, read
    again from the file as written (``plain``: int64, 1-based)."""
    table = _load_table(plain)
    coords = np.column_stack([table[label] for label, _ in plain.columns[:order]])
    outside = _first_out_of_range(coords.reshape(-1, order), 1, np.iinfo(np.int64).max)
    if outside is not None:
        entry, mode = outside
        raise _parse_error(
            plain.path,
            _line_of_entry(plain, entry),
            f"mode {mode + 1} coordinate "
            f"{coords[entry, mode]} is below 1 (FROSTT coordinates are 1-based)",
        )
    if shape is not None:
        _check_frostt_shape(plain, coords, shape)
    raise AssertionError(f"{plain.path}: the parser's extremes disagree with its values")


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
        raise ShapeError(
            f"{body.path}, line {_line_of_entry(body, entry)}: mode {mode + 1} "
            f"coordinate {coords[entry, mode]} is outside shape={shape} "
            f"(extent {shape[mode]})"
        )


def _write_frostt(path: str, tensor: Tensor) -> None:
    if tensor.ndim == 0:
        raise ShapeError("FROSTT files hold tensors of order >= 1; this one is a scalar")
    if tensor.dtype.kind == "c":
        raise TypeError(
            "FROSTT files hold real values; write complex tensors as .mtx (matrices) or .npz"
        )
    coords, values = tensor.coords()
    with _open_text(path, "w") as stream:
        _write_entries(stream, coords, values)
