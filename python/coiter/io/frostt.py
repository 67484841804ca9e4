"""FROSTT (``.tns``, ``.tns.gz``) files: one ``i j k ... value`` line per entry, any order."""

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
    columns = tuple((f"mode {m + 1} coordinate", np.dtype(np.int64)) for m in range(order))
    body = _Body(path, number, columns + (("value", _frostt_value_dtype(dtype)),), "#")
    table = _load_table(body)
    coords = np.column_stack([table[label] for label, _ in columns]).reshape(-1, order)
    outside = _first_out_of_range(coords, 1, np.iinfo(np.int64).max)
    if outside is not None:
        entry, mode = outside
        raise _parse_error(
            path,
            _line_of_entry(body, entry),
            f"mode {mode + 1} coordinate "
            f"{coords[entry, mode]} is below 1 (FROSTT coordinates are 1-based)",
        )
    extents = tuple(int(e) for e in coords.max(axis=0))
    if shape is not None and len(shape) == order:
        _check_frostt_shape(body, coords, shape)
    shape = _padded_shape(path, extents, shape, "largest coordinates")
    values = _cast_values(np.ascontiguousarray(table["value"]), dtype, path)
    return _tensor_of_entries(path, coords - 1, values, shape, format or "coo")


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
