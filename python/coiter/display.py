"""Rich displays in Jupyter: the HTML that ``_repr_html_`` of tensors, formats, schedules and
kernels returns (docs/jupyter.md).

The builders read what the classes expose publicly (a tensor's shape, levels and values, a
format's levels and level map) or take the facts as arguments (a kernel's), so every class can
hook in with a one-line method whatever its layer. A tensor's display shows a spy plot of a
matrix (an inline PNG) when matplotlib is installed; a kernel's shows its source highlighted by
pygments when installed, else as escaped text. Nothing here computes a pending tensor: its
caller says that it is lazy, and the display shows the definition instead of the data.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .plotting import spy_png

# A spy plot is drawn into a tensor's display up to this many stored entries (reading the
# coordinates of more would make showing a tensor slow); ct.spy draws any size.
INLINE_SPY_LIMIT = 2_000_000
# Array elements shown at each end of an abbreviated level array.
_EDGE_ITEMS = 4

_TABLE = 'style="border-collapse:collapse;text-align:left;font-size:90%"'
_CELL = 'style="border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top"'
_BOX = (
    'style="display:inline-block;border:1px solid #888;border-radius:4px;padding:2px 6px;'
    'margin:2px;font-family:monospace"'
)


def _e(value: object) -> str:
    return html.escape(str(value))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table; cells are HTML already."""
    head = "".join(f"<th {_CELL}>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td {_CELL}>{cell}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table {_TABLE}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _facts(pairs: Sequence[tuple[str, str]]) -> str:
    """A two-column table of named facts; values are HTML already."""
    rows = "".join(f"<tr><th {_CELL}>{_e(k)}</th><td {_CELL}>{v}</td></tr>" for k, v in pairs)
    return f"<table {_TABLE}><tbody>{rows}</tbody></table>"


def _code(text: str) -> str:
    return f"<code>{_e(text)}</code>"


def abbreviated(array: Any) -> str:
    """An array's text with only its first and last few elements when long."""
    array = np.asarray(array)
    return np.array2string(
        array, threshold=2 * _EDGE_ITEMS, edgeitems=_EDGE_ITEMS, max_line_width=100
    )


# -- formats -------------------------------------------------------------------------------


def _stored_coordinate(entry: Sequence[Any]) -> str:
    """What a level stores, from its entry of ``Format.level_map``."""
    kind, *args = entry
    if kind == "mode":
        return f"mode {args[0]}"
    if kind == "block":
        return f"block of mode {args[0]} (blocks of {args[1]})"
    if kind == "within_block":
        return f"offset in a block, mode {args[0]}"
    if kind == "diagonal":
        return f"diagonal (mode {args[1]} − mode {args[0]})"
    if kind == "slot":
        return f"slot within mode {args[0]}"
    return " ".join(str(part) for part in entry)


def _level_rows(fmt: Any) -> list[list[str]]:
    rows = []
    for k, (level, stored) in enumerate(zip(fmt.levels, fmt.level_map)):
        properties = [name for name, held in level.properties.items() if held]
        rows.append(
            [
                str(k),
                _code(str(level)),
                _e(_stored_coordinate(stored)),
                _e(", ".join(level.array_names) or "none"),
                _e(", ".join(properties) or "none"),
            ]
        )
    return rows


def level_diagram(fmt: Any) -> str:
    """The levels of a format as a row of boxes, outermost first, then a table of each level's
    type, stored coordinate, arrays and properties."""
    boxes = " → ".join(
        f"<span {_BOX}>{_e(level.name)}<br><small>{_e(_stored_coordinate(stored))}</small></span>"
        for level, stored in zip(fmt.levels, fmt.level_map)
    )
    table = _table(
        ["level", "type", "stores", "arrays", "properties"],
        _level_rows(fmt),
    )
    return f"<div>{boxes}</div>{table}"


def _format_label(fmt: Any) -> str:
    """A format's letters, and its name when it has one: ``ds`` or ``dia (dia)``."""
    return _code(str(fmt)) + (f" ({_e(fmt.name)})" if fmt.name else "")


def format_html(fmt: Any) -> str:
    """The display of a :class:`coiter.Format`."""
    title = f"coiter.Format {_format_label(fmt)}"
    order = f"order {fmt.order}, mode order {tuple(fmt.mode_order)}, {len(fmt.levels)} levels"
    return f"<div><b>{title}</b> — {_e(order)}{level_diagram(fmt)}</div>"


# -- tensors -------------------------------------------------------------------------------


def _spy_image(tensor: Any) -> str:
    """An inline PNG spy plot of a matrix on the host, or a note saying why there is none."""
    if tensor.ndim != 2 or tensor.device != "cpu":
        return ""
    if tensor.nnz > INLINE_SPY_LIMIT:
        return f"<p><small>spy plot: {tensor.nnz:,} entries, call ct.spy(T)</small></p>"
    try:
        png = spy_png(tensor)
    except ImportError:
        return "<p><small>spy plot: pip install matplotlib</small></p>"
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="spy plot" src="data:image/png;base64,{data}">'


def _level_arrays(tensor: Any) -> str:
    rows = []
    for k, level in enumerate(tensor.levels):
        parameters = ", ".join(f"{name}={value}" for name, value in level.parameters.items())
        # In the level type's order (pos before crd), as the format documentation lists them.
        names = [n for n in level.type.array_names if n in level.arrays]
        names += [n for n in level.arrays if n not in names]
        arrays = "<br>".join(
            f"{_e(name)} = <code>{_e(abbreviated(level.arrays[name]))}</code>" for name in names
        )
        rows.append([str(k), _code(str(level.type)), _e(parameters), arrays])
    rows.append(["", "values", "", f"<code>{_e(abbreviated(tensor.values))}</code>"])
    return _table(["level", "type", "parameters", "arrays"], rows)


def tensor_html(tensor: Any, pending: str | None = None) -> str:
    """The display of a :class:`coiter.Tensor`; ``pending`` is the definition of a tensor not
    computed yet, shown instead of its data (showing a lazy tensor runs no kernel)."""
    name = f" {_code(tensor.name)}" if tensor.name else ""
    shape = " × ".join(str(e) for e in tensor.shape) or "() (a scalar)"
    facts = [
        ("format", _format_label(tensor.format)),
        ("shape", _e(shape)),
        ("dtype", _e(tensor.dtype)),
    ]
    if pending is not None:
        facts.append(("state", f"lazy, not computed yet: {_code(pending)}"))
        return f"<div><b>coiter.Tensor</b>{name}{_facts(facts)}</div>"
    size = math.prod(tensor.shape)
    density = tensor.nnz / size if size else 0.0
    facts += [
        ("nnz", _e(f"{tensor.nnz:,}")),
        ("density", _e(f"{density:.4g}")),
        ("index dtype", _e(tensor.index_dtype)),
        ("device", _e(tensor.device)),
    ]
    parts = [f"<div><b>coiter.Tensor</b>{name}", _facts(facts)]
    if tensor.device == "cpu":
        parts.append(_level_arrays(tensor))
    parts.append(_spy_image(tensor))
    parts.append("</div>")
    return "".join(parts)


# -- schedules and kernels -------------------------------------------------------------------


def schedule_html(text: str, commands: Sequence[tuple[str, Sequence[Any]]]) -> str:
    """The display of a :class:`coiter.Schedule`: its commands in order and its text."""
    if not commands:
        return "<div><b>coiter.Schedule</b> — empty (the default schedule)</div>"
    rows = [
        [str(k + 1), _code(name), _e(", ".join(_argument(a) for a in args))]
        for k, (name, args) in enumerate(commands)
    ]
    return (
        f"<div><b>coiter.Schedule</b> {_code(text)}"
        f"{_table(['#', 'command', 'arguments'], rows)}</div>"
    )


def _argument(argument: Any) -> str:
    if isinstance(argument, (tuple, list)):
        return "[" + ", ".join(str(a) for a in argument) + "]"
    return str(argument)


def highlighted(source: str, language: str) -> str:
    """``source`` as HTML, highlighted by pygments when installed (inline styles: no style
    sheet needed), else escaped in a ``<pre>``."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name
    except ImportError:
        return f"<pre>{_e(source)}</pre>"
    lexer = get_lexer_by_name({"llvm": "llvm", "cuda": "cuda"}.get(language, "c"))
    return str(highlight(source, lexer, HtmlFormatter(noclasses=True)))


def kernel_html(
    *,
    statement: str,
    operands: Sequence[tuple[str, Any, Any]],
    result: tuple[str, Any, Any],
    schedule: str,
    target: str,
    engine: str,
    concrete: str,
    source: str,
    language: str,
    variants: int,
    cache: Mapping[str, Any],
) -> str:
    """The display of a :class:`coiter.Kernel`: its signature (statement, the formats and dtypes
    of its operands and result, schedule, target), concrete index notation, generated source
    and the state of the kernel cache."""
    signature = _table(
        ["tensor", "role", "format", "dtype"],
        [[_code(n), "input", _code(str(f)), _e(d)] for n, f, d in operands]
        + [[_code(result[0]), "result", _code(str(result[1])), _e(result[2])]],
    )
    facts = [
        ("statement", _code(statement)),
        ("schedule", _code(schedule) if schedule else "default"),
        ("target", _e(f"{target} ({engine} engine)")),
        ("compiled variants", _e(f"{variants} (one per index width of the operands)")),
        (
            "kernel cache",
            _e(
                ", ".join(
                    f"{k}={cache[k]}"
                    for k in ("entries", "hits", "misses", "disk_hits", "compiles")
                    if k in cache
                )
            ),
        ),
    ]
    return (
        f"<div><b>coiter.Kernel</b>{_facts(facts)}{signature}"
        f"<p><b>concrete index notation</b></p><pre>{_e(concrete)}</pre>"
        f"<details><summary><b>generated {_e(language)}</b> ({source.count(chr(10)) + 1} lines)"
        f"</summary>{highlighted(source, language)}</details></div>"
    )
