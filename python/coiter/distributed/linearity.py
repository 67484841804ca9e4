"""Whether a statement may be split along a summed index, and how its partials combine.

Splitting a summed index ``j`` into blocks gives each block a *partial result*: the statement with
``j`` restricted to the block. The partials add up to the result only when the statement is a sum
over ``j`` of terms that each hold ``j`` (SuperTaco's restriction, Shinde's SuperTaco thesis, §3.5):
in ``a(i) = d(i) + B(i,j) c(j)`` every block would add ``d`` again. A statement whose right side is
one ``max``/``min`` over ``j`` combines its partials with max/min instead (the unstored zeros of
every block count, as in the whole).

The implicit (Einstein) sums are first made explicit with the compiler's rule (the smallest
term holding every use of the index, ``src/cin/concretize.cpp``), then the expression is
classified bottom-up:

- ``const``: does not hold ``j`` (the same in every block);
- ``open``: holds ``j`` free, inside the sum that binds it (one value per coordinate of ``j``);
- ``linear``: the sum over ``j`` of the block's coordinates (the block partials add up);
- anything else cannot be split (ScheduleError naming the part that cannot).
"""

from __future__ import annotations

from ..errors import ScheduleError
from ..notation import Access, Binary, IndexExpr, IndexVar, Literal, Negate, Reduction


def _uses(expr: IndexExpr, var: str) -> bool:
    if isinstance(expr, Access):
        return any(v.name == var for v in expr.indices)
    if isinstance(expr, Negate):
        return _uses(expr.a, var)
    if isinstance(expr, Binary):
        return _uses(expr.a, var) or _uses(expr.b, var)
    if isinstance(expr, Reduction):
        return _uses(expr.body, var)
    return False


def _variables(expr: IndexExpr, out: list[str]) -> list[str]:
    """Index variables of ``expr`` in order of first use (the compiler's order)."""
    if isinstance(expr, Access):
        out.extend(v.name for v in expr.indices if v.name not in out)
    elif isinstance(expr, Negate):
        _variables(expr.a, out)
    elif isinstance(expr, Binary):
        _variables(expr.a, out)
        _variables(expr.b, out)
    elif isinstance(expr, Reduction):
        _variables(expr.body, out)
    return out


def _reduced(expr: IndexExpr, out: set[str]) -> set[str]:
    if isinstance(expr, Reduction):
        out.add(expr.var.name)
        _reduced(expr.body, out)
    elif isinstance(expr, Negate):
        _reduced(expr.a, out)
    elif isinstance(expr, Binary):
        _reduced(expr.a, out)
        _reduced(expr.b, out)
    return out


def _bind_inside(expr: IndexExpr, var: str) -> IndexExpr | None:
    """``expr`` with the smallest term strictly inside it holding every use of ``var`` wrapped
    in a sum, or None when that term is ``expr`` itself (concretize.cpp's bindInside)."""
    if isinstance(expr, Binary):
        in_a, in_b = _uses(expr.a, var), _uses(expr.b, var)
        if in_a == in_b:
            return None
        side = expr.a if in_a else expr.b
        bound = _bind_sum(side, var) if expr.op in ("add", "sub") else _bind_inside(side, var)
        if bound is None:
            return None
        return Binary(expr.op, bound, expr.b) if in_a else Binary(expr.op, expr.a, bound)
    if isinstance(expr, Negate):
        bound = _bind_inside(expr.a, var)
        return None if bound is None else Negate(bound)
    if isinstance(expr, Reduction):
        return Reduction(expr.op, expr.var, _bind_sum(expr.body, var))
    return None


def _bind_sum(expr: IndexExpr, var: str) -> IndexExpr:
    bound = _bind_inside(expr, var)
    return bound if bound is not None else Reduction("add", IndexVar(var), expr)


def explicit_sums(rhs: IndexExpr, free: list[str]) -> IndexExpr:
    """``rhs`` with every index used on the right only wrapped in an explicit sum."""
    explicitly = _reduced(rhs, set())
    for var in _variables(rhs, []):
        if var not in free and var not in explicitly:
            rhs = _bind_sum(rhs, var)
    return rhs


def partial_combiner(rhs: IndexExpr, free: list[str], var: str) -> str:
    """How the partial results of blocks of the summed index ``var`` combine: ``"add"``,
    ``"max"`` or ``"min"``; ScheduleError when the statement cannot be split along ``var``."""
    rhs = explicit_sums(rhs, free)
    if isinstance(rhs, Reduction) and rhs.var.name == var and rhs.op in ("max", "min"):
        if _kind(rhs.body, var) not in ("open", "const"):
            raise _cannot(var, rhs, "it reduces over it twice")
        return rhs.op
    kind = _kind(rhs, var)
    if kind != "linear":
        raise _cannot(
            var, rhs, "the right side does not use it" if kind == "const" else "it is not summed"
        )
    return "add"


def _cannot(var: str, expr: IndexExpr, why: str) -> ScheduleError:
    return ScheduleError(
        f"distribute({var}): the summed index {var} cannot be split in {expr}: {why}; "
        "blocks of a summed index give partial results that must add up (a sum over "
        f"{var} of terms that all hold {var}) or be one max/min over {var}"
    )


def _kind(expr: IndexExpr, var: str) -> str:
    if isinstance(expr, Access):
        return "open" if any(v.name == var for v in expr.indices) else "const"
    if isinstance(expr, Literal):
        return "const"
    if isinstance(expr, Negate):
        return _kind(expr.a, var)
    if isinstance(expr, Reduction):
        body = _kind(expr.body, var)
        if expr.var.name == var:
            if expr.op != "add":
                raise _cannot(var, expr, f"its {expr.op} is not the whole right side")
            if body == "linear":
                raise _cannot(var, expr, "it is summed twice")
            return "linear"
        if body == "linear" and expr.op != "add":
            raise _cannot(var, expr, f"a {expr.op} over {expr.var.name} encloses its sum")
        return body
    if isinstance(expr, Binary):
        a, b = _kind(expr.a, var), _kind(expr.b, var)
        if "open" in (a, b):
            if "linear" in (a, b):
                raise _cannot(var, expr, "it is both free and summed here")
            return "open"
        if expr.op in ("add", "sub"):
            if a == b:
                return a
            raise _cannot(var, expr, "a term without it would be added once per block")
        if expr.op == "mul":
            if a == b == "linear":
                raise _cannot(var, expr, "a product of two sums over it is not their blocks' sum")
            return "linear" if "linear" in (a, b) else "const"
        # Division: the numerator may hold the sum, the denominator must not.
        if b == "linear":
            raise _cannot(var, expr, "a sum over it divides")
        return a
    raise TypeError(f"not an index expression: {expr!r}")
