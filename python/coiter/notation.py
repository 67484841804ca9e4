"""Index notation in Python (docs/reference.md, "Index notation"): index variables, expressions
built with operators, reductions, and assignments. Expressions are plain Python trees; they become
the C++ AST (``_core``) when compiled, where types are promoted and shapes checked."""

from __future__ import annotations

import cmath
import math
import numbers
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from . import _core
from .errors import CompileError, ShapeError


class IndexVar:
    """An index variable of index notation: ``ct.IndexVar("i")``, or several at once with
    :func:`indices`.

    Index variables name the modes of tensor accesses (``A[i, j]``); two variables are equal
    when their names are. A variable on the right of an assignment but not on its left is
    summed over.

    Parameters
    ----------
    name : str
        A Python identifier.

    Raises
    ------
    ValueError
        If ``name`` is not an identifier.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"an index variable needs an identifier name, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"IndexVar({self.name!r})"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexVar) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("IndexVar", self.name))


def indices(names: str) -> tuple[IndexVar, ...]:
    """Index variables named by a space- or comma-separated string.

    Parameters
    ----------
    names : str
        The names, e.g. ``"i j k"`` or ``"i, j"``.

    Returns
    -------
    tuple of IndexVar
        One variable per name (a 1-tuple for a single name).

    Examples
    --------
    >>> i, j = ct.indices("i j")
    >>> i, j
    (IndexVar('i'), IndexVar('j'))
    """
    parts = names.replace(",", " ").split()
    return tuple(IndexVar(p) for p in parts) if len(parts) != 1 else (IndexVar(parts[0]),)


def _wrap(value: object) -> IndexExpr:
    if isinstance(value, IndexExpr):
        return value
    if isinstance(value, (bool, np.bool_)):
        return Literal(bool(value))
    # (numbers.Number, which NumPy's scalars register with, is outside NumPy's annotations)
    if isinstance(value, numbers.Number) and np.ndim(value) == 0:  # type: ignore[arg-type]
        scalar: Any = value.item() if isinstance(value, np.generic) else value
        return Literal(scalar)
    raise TypeError(
        f"cannot use {type(value).__name__} {value!r} in an index expression; wrap "
        "arrays with ct.asarray and index them, e.g. A[i, j]"
    )


class IndexExpr:
    """An index-notation expression; combine with ``+ - * /`` and unary ``-``."""

    def __add__(self, other: object) -> Binary:
        return Binary("add", self, _wrap(other))

    def __radd__(self, other: object) -> Binary:
        return Binary("add", _wrap(other), self)

    def __sub__(self, other: object) -> Binary:
        return Binary("sub", self, _wrap(other))

    def __rsub__(self, other: object) -> Binary:
        return Binary("sub", _wrap(other), self)

    def __mul__(self, other: object) -> Binary:
        return Binary("mul", self, _wrap(other))

    def __rmul__(self, other: object) -> Binary:
        return Binary("mul", _wrap(other), self)

    def __truediv__(self, other: object) -> Binary:
        return Binary("div", self, _wrap(other))

    def __rtruediv__(self, other: object) -> Binary:
        return Binary("div", _wrap(other), self)

    def __neg__(self) -> Negate:
        return Negate(self)

    def __pos__(self) -> IndexExpr:
        return self

    def __bool__(self) -> bool:
        raise TypeError("an index expression has no truth value (assign it to a tensor instead)")

    def _text(self, precedence: int) -> str:
        """The expression as text, parenthesized when its operator binds less tightly than
        ``precedence`` (each kind of expression writes its own)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self._text(0)

    def __repr__(self) -> str:
        return f"<IndexExpr {self}>"


class Access(IndexExpr):
    """``tensor[i, j]``: a tensor indexed by index variables. ``tensor`` is a coiter tensor, or
    what stands for one while compiling (a parsed name, a kernel's tensor description)."""

    def __init__(self, tensor: Any, indices: Sequence[IndexVar]) -> None:
        self.tensor = tensor
        self.indices = tuple(indices)

    def _text(self, precedence: int) -> str:
        name = getattr(self.tensor, "name", None) or "?"
        return f"{name}({','.join(v.name for v in self.indices)})"


class Literal(IndexExpr):
    def __init__(self, value: complex) -> None:
        self.value = value

    def _text(self, precedence: int) -> str:
        return _literal_text(self.value)


def _literal_text(value: complex) -> str:
    """A literal as the parser reads it back (statements are printed to be compiled again, by
    the autoscheduler's pipelines): an overflowed float (``1e9995``) as ``1e999``, not ``inf``,
    which would read as a tensor's name; NaN as the difference it comes from. (The C++ printer,
    src/notation/index_notation.cpp, writes the same.)"""
    if isinstance(value, complex) and not cmath.isfinite(value):
        sign = "-" if value.imag < 0 else "+"
        return f"({_real_text(value.real)}{sign}{_real_text(abs(value.imag))}j)"
    if isinstance(value, float) and math.isnan(value):
        return "(1e999 - 1e999)"
    return _real_text(value) if isinstance(value, float) else repr(value)


def _real_text(x: float) -> str:
    if math.isinf(x):
        return "1e999" if x > 0 else "-1e999"
    return repr(x)


class Negate(IndexExpr):
    def __init__(self, a: IndexExpr) -> None:
        self.a = a

    def _text(self, precedence: int) -> str:
        return "-" + self.a._text(4)


_SYMBOLS = {"add": ("+", 1), "sub": ("-", 1), "mul": ("*", 2), "div": ("/", 2)}


class Binary(IndexExpr):
    def __init__(self, op: str, a: IndexExpr, b: IndexExpr) -> None:
        self.op, self.a, self.b = op, a, b

    def _text(self, precedence: int) -> str:
        symbol, p = _SYMBOLS[self.op]
        text = f"{self.a._text(p)} {symbol} {self.b._text(p + 1)}"
        return f"({text})" if p < precedence else text


class Reduction(IndexExpr):
    """``ct.sum(i, expr)``, ``ct.max(i, expr)``, ``ct.min(i, expr)``."""

    def __init__(self, op: str, var: IndexVar, body: IndexExpr) -> None:
        self.op, self.var, self.body = op, var, body

    def _text(self, precedence: int) -> str:
        name = {"add": "sum"}.get(self.op, self.op)
        return f"{name}({self.var.name}, {self.body._text(0)})"


def _reduction(op: str, var: IndexVar | str, expr: object) -> Reduction:
    if isinstance(var, str):
        var = IndexVar(var)
    if not isinstance(var, IndexVar):
        raise TypeError(f"the first argument of a reduction is an index variable, got {var!r}")
    return Reduction(op, var, _wrap(expr))


def sum(var: IndexVar | str, expr: object) -> Reduction:  # noqa: A001 - the API name (ct.sum)
    """The sum of ``expr`` over the index variable ``var``.

    Indices that appear on the right of an assignment but not on its left are summed
    implicitly; ``ct.sum`` makes a sum explicit, and is needed for a scalar result
    (``s[()] = ct.sum(i, x[i] * x[i])``) or to sum over a smaller term than the implicit rule
    would.

    Parameters
    ----------
    var : IndexVar or str
        The index summed over.
    expr : index expression or number
        What is summed.

    Returns
    -------
    Reduction
        An index expression.
    """
    return _reduction("add", var, expr)


def max(var: IndexVar | str, expr: object) -> Reduction:  # noqa: A001
    """The maximum of ``expr`` over the index variable ``var``.

    Unstored entries count as zeros, as in the dense array: the maximum of a row of negative
    stored values with an unstored entry is 0.

    Parameters
    ----------
    var : IndexVar or str
        The index reduced over.
    expr : index expression or number
        What is reduced.

    Returns
    -------
    Reduction
        An index expression.
    """
    return _reduction("max", var, expr)


def min(var: IndexVar | str, expr: object) -> Reduction:  # noqa: A001
    """The minimum of ``expr`` over the index variable ``var``.

    Unstored entries count as zeros, as in the dense array.

    Parameters
    ----------
    var : IndexVar or str
        The index reduced over.
    expr : index expression or number
        What is reduced.

    Returns
    -------
    Reduction
        An index expression.
    """
    return _reduction("min", var, expr)


class Assignment:
    """``lhs = rhs`` (or ``lhs op= rhs``), the definition of a result tensor."""

    def __init__(self, lhs: Access, rhs: IndexExpr, accumulate: str | None = None) -> None:
        self.lhs, self.rhs, self.accumulate = lhs, rhs, accumulate

    def __str__(self) -> str:
        op = "+=" if self.accumulate == "add" else "="
        return f"{self.lhs} {op} {self.rhs}"


# The deepest expression the compiler takes (the string parser's limit too): its passes walk
# expressions recursively, so a deeper one would end in a RecursionError or exhaust the C++
# stack.
MAX_DEPTH = 100


def check_depth(expr: IndexExpr, what: str) -> None:
    """CompileError when ``expr`` nests deeper than MAX_DEPTH; iterative, so any depth."""
    stack: list[tuple[IndexExpr, int]] = [(expr, 1)]
    deepest = 0
    while stack:
        node, depth = stack.pop()
        deepest = depth if depth > deepest else deepest
        if deepest > MAX_DEPTH:
            raise CompileError(
                f"{what}: the expression nests deeper than {MAX_DEPTH} levels "
                "(operators, signs and reductions); split it into several "
                "assignments"
            )
        children: tuple[IndexExpr, ...] = (
            (node.a, node.b)
            if isinstance(node, Binary)
            else (node.a,)
            if isinstance(node, Negate)
            else (node.body,)
            if isinstance(node, Reduction)
            else ()
        )
        stack.extend((child, depth + 1) for child in children)


def accesses(expr: IndexExpr) -> list[Access]:
    """Every Access in ``expr``, left to right."""
    if isinstance(expr, Access):
        return [expr]
    if isinstance(expr, Negate):
        return accesses(expr.a)
    if isinstance(expr, Binary):
        return accesses(expr.a) + accesses(expr.b)
    if isinstance(expr, Reduction):
        return accesses(expr.body)
    return []


def map_tensors(expr: IndexExpr, fn: Callable[[Any], Any]) -> IndexExpr:
    """``expr`` with the tensor of every access replaced by ``fn(tensor)``."""
    if isinstance(expr, Access):
        return Access(fn(expr.tensor), expr.indices)
    if isinstance(expr, Negate):
        return Negate(map_tensors(expr.a, fn))
    if isinstance(expr, Binary):
        return Binary(expr.op, map_tensors(expr.a, fn), map_tensors(expr.b, fn))
    if isinstance(expr, Reduction):
        return Reduction(expr.op, expr.var, map_tensors(expr.body, fn))
    return expr


def check_extents(
    access_list: Sequence[Access], shape_of: Callable[[Any], Sequence[int] | None]
) -> None:
    """Raise ShapeError when an index variable ranges over modes of different extents;
    ``shape_of(tensor)`` gives a tensor's shape (None to skip it)."""
    check_index_extents(
        (getattr(a.tensor, "name", None) or "a tensor", [v.name for v in a.indices], shape)
        for a in access_list
        if (shape := shape_of(a.tensor)) is not None
    )


def check_index_extents(operands: Iterable[tuple[str, Sequence[str], Sequence[int]]]) -> None:
    """Raise ShapeError when an index ranges over modes of different extents: ``operands``
    gives each operand's name, the index name of each of its modes, and its shape."""
    seen: dict[str, tuple[int, str, int]] = {}
    for name, indices, shape in operands:
        for mode, index in enumerate(indices):
            extent = shape[mode]
            if index not in seen:
                seen[index] = (extent, name, mode)
            elif seen[index][0] != extent:
                first, first_name, first_mode = seen[index]
                raise ShapeError(
                    f"index {index!r} ranges over mode {first_mode} of {first_name} "
                    f"(extent {first}) and mode {mode} of {name} (extent {extent})"
                )


def index_key(key: object, ndim: int, label: str) -> tuple[IndexVar, ...] | None:
    """The index variables of ``T[key]``, or None when ``key`` holds no index variable."""
    key = key if isinstance(key, tuple) else (key,)
    if key == () and ndim == 0:
        return ()
    if not any(isinstance(k, IndexVar) for k in key):
        return None
    if not all(isinstance(k, IndexVar) for k in key):
        raise TypeError(f"{label}: index with index variables only, got {key!r}")
    if len(key) != ndim:
        raise ShapeError(f"{label} has {ndim} modes but is indexed with {len(key)} index variables")
    return key


def core_variables(
    key: Callable[[Any], Hashable], describe: Callable[[Any, int], tuple[str, Any, str, str]]
) -> Callable[[Any], _core.TensorVar]:
    """A ``var_of`` for core_expression and core_statement: one core variable per distinct
    ``key(tensor)`` (a tensor accessed twice is one variable), made from ``describe(tensor,
    n)`` = (name, format, dtype name, index dtype name), n counting the variables made."""
    variables: dict[Hashable, _core.TensorVar] = {}

    def var_of(tensor: Any) -> _core.TensorVar:
        k = key(tensor)
        if k not in variables:
            variables[k] = _core.TensorVar(*describe(tensor, len(variables)))
        return variables[k]

    return var_of


def core_expression(expr: IndexExpr, var_of: Callable[[Any], _core.TensorVar]) -> _core.Expr:
    """``expr`` as the core's expression; ``var_of`` gives the core's variable of an access's
    tensor."""
    if isinstance(expr, Access):
        return _core.access(var_of(expr.tensor), [v.name for v in expr.indices])
    if isinstance(expr, Literal):
        return _core.literal(expr.value)
    if isinstance(expr, Negate):
        return _core.negate(core_expression(expr.a, var_of))
    if isinstance(expr, Binary):
        return _core.binary(
            expr.op, core_expression(expr.a, var_of), core_expression(expr.b, var_of)
        )
    if isinstance(expr, Reduction):
        return _core.reduce(expr.op, expr.var.name, core_expression(expr.body, var_of))
    raise TypeError(f"not an index expression: {expr!r}")


def core_statement(
    assignment: Assignment, var_of: Callable[[Any], _core.TensorVar]
) -> _core.Assignment:
    """``assignment`` (over TensorSpecs) as the core's statement; ``var_of`` gives the core's
    variable of each tensor."""
    lhs = core_expression(assignment.lhs, var_of)
    return _core.assignment(lhs, core_expression(assignment.rhs, var_of), assignment.accumulate)
