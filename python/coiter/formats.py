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
from .display import format_html
from .errors import FormatError

Format = _core.Format
LevelType = _core.LevelType

dense = _core.dense
compressed = _core.compressed
singleton = _core.singleton
hashed = _core.hashed
range = _core.range  # noqa: A001 - the level type's name in the thesis and in the API
offset = _core.offset

# Jupyter's display of a format: its level diagram (docs/jupyter.md). Format is the core's class;
# its Python conveniences are set here.
setattr(Format, "_repr_html_", format_html)  # noqa: B010 - an attribute the stub does not declare

# What the API accepts wherever it takes a format (docs/reference.md, "Formats"): a Format, a name
# or letter string, or a list of level types.
FormatLike: TypeAlias = Format | str | Sequence[LevelType]
# A format as plain data, for pickling (format_state).
FormatState: TypeAlias = str | tuple[list[tuple[str, dict[str, bool | int]]], tuple[int, ...], int]

_BCSR_TEXT = re.compile(r"^\s*bcsr\s*\(\s*\(?\s*(\d+)\s*,\s*(\d+)\s*\)?\s*\)\s*$")


def bcsr(block_shape: Sequence[int]) -> Format:
    """The block CSR format with blocks of ``block_shape = (rows, cols)``.

    Parameters
    ----------
    block_shape : sequence of two ints
        The rows and columns of a block.

    Returns
    -------
    Format
        A format for matrices with four levels: dense (block rows), compressed (block
        columns), dense and dense (the rows and columns inside a block). Matrices stored in it
        must have extents divisible by the block shape.

    Raises
    ------
    FormatError
        If ``block_shape`` is not two integers.

    Examples
    --------
    >>> fmt = ct.bcsr((2, 3))
    >>> fmt.order, len(fmt.levels), fmt.block_shape
    (2, 4, (2, 3))
    """
    try:
        rows, cols = (int(b) for b in block_shape)
    except (TypeError, ValueError):
        raise FormatError(f"bcsr needs a block shape (rows, cols), got {block_shape!r}") from None
    return Format.bcsr(rows, cols)


def as_format(fmt: FormatLike, order: int) -> Format:
    """The :class:`Format` that ``fmt`` names, for tensors of ``order`` modes.

    Every function that takes a format accepts what this function accepts.

    Parameters
    ----------
    fmt : Format, str or sequence of LevelType
        A :class:`Format`; a list of level types (mode order ``(0, 1, ...)``); a format name
        (``"dense"``, ``"csr"``, ``"csc"``, ``"dcsr"``, ``"dcsc"``, ``"coo"``, ``"csf"``,
        ``"dia"``, ``"ell"``; a name wins over a letter string spelling the same word); the
        text ``"bcsr((2, 3))"``; or the letter syntax, one letter per level (``d`` dense,
        ``s`` compressed, ``u`` compressed non-unique, ``q`` singleton, ``c`` singleton
        non-unique, ``h`` hashed) with an optional mode order after ``:`` (``"ds:1,0"``).
    order : int
        The number of modes of the tensors the format is for. Names like ``"dense"`` and
        ``"csf"`` give a format of this order.

    Returns
    -------
    Format

    Raises
    ------
    FormatError
        If ``fmt`` is not a format, or describes tensors of another order.

    Examples
    --------
    >>> ct.as_format("csc", 2)
    Format('ds:1,0')
    >>> ct.as_format("dense", 3) == ct.Format([ct.dense, ct.dense, ct.dense])
    True
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
    else its levels (name, the configurable properties that differ from the level type's
    defaults, a hashed level's bucket count) and mode order. (Formats are C++ objects without
    pickle support.)"""
    text = str(fmt)
    try:
        if as_format(text, fmt.order) == fmt:
            return text
    except ValueError:
        pass  # no text form (levels with properties): described level by level below
    levels = []
    for level in fmt.levels:
        default = getattr(_core, level.name)
        changed: dict[str, bool | int] = {
            k: v
            for k, v in level.properties.items()
            if k in level.configurable_properties and v != default.properties[k]
        }
        if level.buckets is not None:
            changed["buckets"] = level.buckets
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
