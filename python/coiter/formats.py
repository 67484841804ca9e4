"""Level types and formats (docs/reference.md, "Formats").

The level types and :class:`Format` are the C++ classes of the core, exposed as they are;
this module adds the Python conveniences: resolving the many spellings of a format that
the API accepts (:func:`as_format`) and the blocked format constructor :func:`bcsr`.
"""

import functools
import re
from collections.abc import Sequence
from typing import TypeAlias

from . import _core
from .errors import FormatError

Format = _core.Format
LevelType = _core.LevelType

dense = _core.dense
compressed = _core.compressed
singleton = _core.singleton
hashed = _core.hashed
range = _core.range  # noqa: A001 - the level type's name in the thesis and in the API
offset = _core.offset

# What the API accepts wherever it takes a format (docs/reference.md, "Formats"): a Format, a name
# or letter string, or a list of level types.
FormatLike: TypeAlias = Format | str | Sequence[LevelType]
# A format as plain data, for pickling (format_state).
FormatState: TypeAlias = str | tuple[list[tuple[str, dict[str, bool]]], tuple[int, ...], int]

_BCSR_TEXT = re.compile(r"^\s*bcsr\s*\(\s*\(?\s*(\d+)\s*,\s*(\d+)\s*\)?\s*\)\s*$")


def bcsr(block_shape: Sequence[int]) -> Format:
    """Block CSR with blocks of ``block_shape = (rows, cols)``.

    Levels: dense (block rows), compressed (block columns), dense, dense (inside a block).
    """
    try:
        rows, cols = (int(b) for b in block_shape)
    except (TypeError, ValueError):
        raise FormatError(f"bcsr needs a block shape (rows, cols), got {block_shape!r}") from None
    return Format.bcsr(rows, cols)


def as_format(fmt: FormatLike, order: int) -> Format:
    """Resolve ``fmt`` to a :class:`Format` describing tensors of ``order`` modes.

    Accepts a :class:`Format`, a list of level types, a format name (``"csr"``, ``"coo"``,
    ``"dense"``, ...; a name wins over a letter string spelling the same word), the text
    ``"bcsr((2, 3))"``, or the letter syntax (``"ds:1,0"``).
    """
    if isinstance(fmt, Format):
        result = fmt
    elif isinstance(fmt, (list, tuple)) and all(isinstance(level, LevelType) for level in fmt):
        result = Format(list(fmt))
    elif isinstance(fmt, str):
        result = _format_from_text(fmt.strip(), order)
    else:
        raise FormatError(
            f"not a format: {fmt!r} (expected a Format, a format name or a "
            "letter string such as 'ds')"
        )
    if result.order != order:
        raise FormatError(
            f"format {result} describes order-{result.order} tensors, "
            f"but the tensor has order {order}"
        )
    return result


@functools.lru_cache(maxsize=256)
def _format_from_text(text: str, order: int) -> Format:
    # Formats are immutable: each text is read once (kernel calls resolve "csr" per operand).
    blocked = _BCSR_TEXT.match(text)
    if Format.is_name(text):
        return Format.named(text, order)
    if blocked:
        return bcsr((int(blocked.group(1)), int(blocked.group(2))))
    return Format.parse(text)


@functools.lru_cache(maxsize=256)
def is_all_dense(fmt: Format) -> bool:
    """Whether every level is dense and stored in mode order (a plain row-major array).
    (Remembered per format: the array operators ask it of every operand.)"""
    return (
        fmt.name is None
        and all(level.name == "dense" for level in fmt.levels)
        and tuple(fmt.mode_order) == tuple(sorted(fmt.mode_order))
    )


def format_state(fmt: Format) -> FormatState:
    """A picklable description of a format: its text when that reads back as the same format,
    else its levels (name and properties that differ from the level type's defaults) and mode
    order. (Formats are C++ objects without pickle support.)"""
    text = str(fmt)
    try:
        if as_format(text, fmt.order) == fmt:
            return text
    except ValueError:
        pass  # no text form (levels with properties): described level by level below
    levels = []
    for level in fmt.levels:
        default = getattr(_core, level.name)
        changed = {
            k: v
            for k, v in level.properties.items()
            if k in ("ordered", "unique") and v != default.properties[k]
        }
        levels.append((level.name, changed))
    return (levels, tuple(fmt.mode_order), fmt.order)


def format_from_state(state: FormatState) -> FormatLike:
    if isinstance(state, str):
        return state
    levels, mode_order, _ = state
    built = [
        getattr(_core, name)(**changed) if changed else getattr(_core, name)
        for name, changed in levels
    ]
    return _core.Format(built, list(mode_order))
