"""The starting schedules of the empirical search: where the asymptotic frontier plugs in.

The search (search.py) explores, for each *base candidate*, the schedule space of the search
paper (space.py: partitions, loop-order-preserving mappings, parameters). A base candidate
fixes the asymptotic choices: the loop order, and so which operands are intersected, located
or walked. :func:`base_candidates` gives the compiler's default schedule plus every legal loop
order of the statement, each judged by ``ct.schedule_problem``.

The asymptotic stage (``coiter.autosched.frontier``) plugs in through :func:`frontier_bases`:
each member of the statement's frontier lowers to one kernel or two. A member whose one kernel
computes the statement itself, in the result's format, is a :class:`Candidate` (its schedule)
on the operands converted to the formats it reads; any other member (a workspace computed as
a tensor of its own first, a result written transposed) runs as a pipeline of its kernels.
:func:`workspace_candidates` adds ``precompute``: a loop order with the right side accumulated
in a workspace over its innermost variable.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import _core
from ..compiler import core_assignment, schedule_problem, typed_statement
from ..formats import Format, FormatLike, as_format
from ..notation import Reduction, accesses
from ..parser import Parsed, parse, parse_once
from .frontier import Frontier, FrontierCandidate, StoredMember, frontier

__all__ = [
    "Problem",
    "Candidate",
    "FrontierBase",
    "base_candidates",
    "frontier_bases",
    "problem_frontier",
    "members_as_bases",
    "default_program",
    "frontier_summary",
    "DEFAULT",
    "LOOP_ORDER",
    "FRONTIER",
    "WORKSPACE",
    "workspace_candidates",
]

# Where a base candidate comes from (Candidate.origin).
DEFAULT = "default"
LOOP_ORDER = "loop order"
FRONTIER = "frontier"
WORKSPACE = "workspace"
# precompute's workspace formats tried: a dense array (the default) and a hashed list, which
# stays small when the dense one would be as long as a huge dimension.
WORKSPACE_FORMATS = ("", "hashed")
# Beyond this many index variables the loop orders are not enumerated (8! = 40320 legality
# questions): the default schedule alone starts the search.
_MAX_PERMUTED_VARIABLES = 6


@dataclass(frozen=True)
class Level:
    """One stored level of an operand, as the schedule space reads it: the index variable it
    stores, its level type's name, and the variables of the levels above it."""

    variable: str
    kind: str
    above: tuple[str, ...]

    @property
    def random_access(self) -> bool:
        return self.kind in ("dense", "hashed")


@dataclass
class Problem:
    """A statement and the formats and dtypes of its tensors (the result's too): what a
    schedule is chosen for. ``variables`` are the statement's index variables, left side
    first, then in order of appearance; ``summed`` those not on the left side."""

    text: str
    parsed: Parsed
    formats: dict[str, Format]
    dtypes: dict[str, np.dtype[Any]]
    result: str
    variables: tuple[str, ...] = field(init=False)
    summed: tuple[str, ...] = field(init=False)
    levels: dict[str, tuple[Level, ...]] = field(init=False)

    def __post_init__(self) -> None:
        assignment = self.parsed[0]
        lhs = tuple(v.name for v in assignment.lhs.indices)
        seen = list(lhs)
        for access in accesses(assignment.rhs):
            seen += [v.name for v in access.indices if v.name not in seen]
        seen += [v for v in _reduction_variables(assignment.rhs) if v not in seen]
        self.variables = tuple(seen)
        self.summed = tuple(v for v in seen if v not in lhs)
        self.levels = {}
        all_accesses = [assignment.lhs] + accesses(assignment.rhs)
        for access in all_accesses:
            fmt = self.formats[access.tensor.name]
            names = [v.name for v in access.indices]
            stored = [names[m] for m in fmt.mode_order]
            self.levels[access.tensor.name] = tuple(
                Level(stored[k], fmt.levels[k].name, tuple(stored[:k])) for k in range(len(stored))
            )

    @classmethod
    def of(
        cls,
        stmt: str | Parsed,
        formats: Mapping[str, FormatLike],
        dtypes: Mapping[str, DTypeLike] | None = None,
    ) -> Problem:
        """The problem of ``stmt`` (text or parsed) with ``formats`` and ``dtypes`` by tensor
        name (missing: dense, float64)."""
        parsed = parse(stmt) if isinstance(stmt, str) else stmt
        assignment, refs = parsed
        dtypes = dtypes or {}
        return cls(
            str(stmt) if isinstance(stmt, str) else str(assignment),
            parsed,
            {n: as_format(formats.get(n, "dense"), r.order) for n, r in refs.items()},
            {n: np.dtype(dtypes.get(n, np.float64)) for n in refs},
            assignment.lhs.tensor.name,
        )

    def with_formats(self, overrides: Mapping[str, Format]) -> Problem:
        """The same statement with some tensors' formats replaced (a conversion)."""
        return Problem(
            self.text, self.parsed, dict(self.formats, **overrides), self.dtypes, self.result
        )

    def legality(self, schedule: str) -> str | None:
        """Why ``schedule`` is illegal here (``ct.schedule_problem``, the authority), or None."""
        return schedule_problem(self.parsed, schedule, formats=self.formats, dtypes=self.dtypes)


def _reduction_variables(expr: Any) -> list[str]:
    if isinstance(expr, Reduction):
        return [expr.var.name] + _reduction_variables(expr.body)
    children = [getattr(expr, name) for name in ("a", "b") if hasattr(expr, name)]
    return [v for child in children for v in _reduction_variables(child)]


@dataclass(frozen=True)
class Candidate:
    """A starting schedule: its canonical text (``""`` is the compiler's default), where it
    comes from, and the loop order it fixes (``None``: the default's, decided by the
    compiler)."""

    schedule: str
    origin: str
    loop_order: tuple[str, ...] | None = None


def workspace_candidates(
    problem: Problem,
    bases: Sequence[Candidate],
    useful: Callable[[tuple[str, ...], Problem], bool],
) -> tuple[list[Candidate], int]:
    """For each base candidate with a loop order, the statement's right side precomputed into
    a workspace over its innermost loop's variable (Gustavson's row accumulator:
    ``reorder(i,k,j);precompute(B(i,k) * C(k,j),[j],[jw])``), in each of WORKSPACE_FORMATS,
    where ``useful`` (trimming.useful_workspace) keeps the loop order and ``ct.schedule_problem``
    accepts the schedule. Returns the candidates and how many loop orders ``useful`` dropped."""
    rhs = str(problem.parsed[0].rhs)
    found, dropped = [], 0
    for base in bases:
        order = base.loop_order
        if order is None or not base.schedule:
            continue
        if not useful(order, problem):
            dropped += 1
            continue
        v = order[-1]
        w = _fresh_variable(f"{v}w", problem.variables)
        for fmt in WORKSPACE_FORMATS:
            text = f"{base.schedule};precompute({rhs},[{v}],[{w}]{',' + fmt if fmt else ''})"
            if problem.legality(text) is None:
                found.append(Candidate(text, WORKSPACE, order))
    return found, dropped


def _fresh_variable(name: str, taken: Sequence[str]) -> str:
    fresh, n = name, 1
    while fresh in taken:
        fresh, n = f"{name}{n}", n + 1
    return fresh


def base_candidates(stmt: str, formats: Mapping[str, FormatLike]) -> list[Candidate]:
    """The compiler's default schedule, then every loop order of ``stmt`` that is legal for
    ``formats`` (name -> format; missing names are dense), in lexicographic order of the
    permutations of the statement's index variables (left side first)."""
    return loop_order_candidates(Problem.of(stmt, formats))


def loop_order_candidates(problem: Problem) -> list[Candidate]:
    """:func:`base_candidates` of a problem already read."""
    found = [Candidate("", DEFAULT)]
    variables = problem.variables
    if not 2 <= len(variables) <= _MAX_PERMUTED_VARIABLES:
        return found
    for order in itertools.permutations(variables):
        text = f"reorder({','.join(order)})"
        if problem.legality(text):
            continue
        found.append(Candidate(text, LOOP_ORDER, tuple(order)))
    return found


@dataclass(frozen=True)
class FrontierBase:
    """A member of the statement's asymptotic frontier, as the empirical stage uses it. When
    ``candidate`` is set, the member is that schedule of the statement on the operands
    converted to ``conversions`` (name -> format; empty: the given formats); otherwise it runs
    as the pipeline of its kernels (``member.pipeline()``)."""

    member: FrontierCandidate | StoredMember
    conversions: dict[str, Format]
    candidate: Candidate | None


_LOOP_ORDER_SCHEDULE = re.compile(r"reorder\(([\w,]+)\)")


def frontier_bases(
    problem: Problem, seconds: float | None = None
) -> tuple[list[FrontierBase], str | None]:
    """The frontier members of ``problem`` that lower, as base candidates, and None; or no
    members and why the frontier does not apply (the asymptotic stage takes products of
    accesses only). ``seconds``: the frontier's deadline (frontier.frontier)."""
    built = problem_frontier(problem, seconds)
    return members_as_bases(problem, built) if isinstance(built, Frontier) else ([], built)


def problem_frontier(problem: Problem, seconds: float | None = None) -> Frontier | str:
    """The asymptotic frontier of ``problem`` (``seconds``: its deadline), or why the asymptotic
    stage does not take the statement (it takes products of accesses only)."""
    try:
        return frontier(
            problem.text, problem.formats, problem.dtypes[problem.result], problem.dtypes, seconds
        )
    except ValueError as error:
        return f"{type(error).__name__}: {error}"


def members_as_bases(problem: Problem, built: Frontier) -> tuple[list[FrontierBase], str | None]:
    """:func:`frontier_bases` of a frontier already built."""
    if any(not f for m in built.members for s in m.stages for f in s.formats.values()):
        # (The core names a stage's formats by their short text, which a format with level
        # properties, such as an unordered compressed level, does not have.)
        return [], "a format without a short text form (level properties)"
    statement = str(problem.parsed[0])
    bases = []
    for member in built.members:
        stages = member.stages
        candidate = None
        conversions: dict[str, Format] = {}
        if len(stages) == 1 and str(parse_once(stages[0].statement)[0]) == statement:
            stage = stages[0]
            formats = {n: as_format(f, len(problem.levels[n])) for n, f in stage.formats.items()}
            # (A scalar result has no format to write transposed.)
            result_format = formats.get(problem.result, problem.formats[problem.result])
            if result_format == problem.formats[problem.result]:
                match = _LOOP_ORDER_SCHEDULE.fullmatch(stage.schedule)
                order = tuple(match.group(1).split(",")) if match else None
                candidate = Candidate(stage.schedule, f"{FRONTIER} #{member.index}", order)
                conversions = {
                    n: f
                    for n, f in formats.items()
                    if n != problem.result and f != problem.formats[n]
                }
        bases.append(FrontierBase(member, conversions, candidate))
    if not bases:
        return [], "no frontier member lowers to coiter kernels"
    return bases, None


def default_program(problem: Problem, bases: list[FrontierBase]) -> FrontierBase | None:
    """The candidate of the frontier's enumeration (a member or a dominated one) that is the
    compiler's default program on the given formats: one kernel of the statement itself, no
    operand converted, in the default schedule's loop order (``_core.default_loop_order``:
    the automatic loop order, before workspaces and parallel tags). None when the default's
    loops are not one chain or no candidate has its loop order."""
    if not bases:
        return None
    typed, _, _ = typed_statement(
        problem.parsed, problem.formats, problem.dtypes[problem.result], problem.dtypes
    )
    order = _core.default_loop_order(core_assignment(typed))
    if not order:
        return None
    schedule = f"reorder({','.join(order)})"
    statement = str(problem.parsed[0])
    given = {n: str(f) for n, f in problem.formats.items()}
    built = bases[0].member
    # (Members read back from the disk come with their default program: frontier_cache.py.)
    assert isinstance(built, FrontierCandidate), "default_program of a frontier just built"
    for candidate in built.frontier.candidates:
        if not candidate.lowered or len(candidate.stages) != 1:
            continue
        stage = candidate.stages[0]
        formats = {n: str(as_format(f, len(problem.levels[n]))) for n, f in stage.formats.items()}
        if (
            stage.schedule == schedule
            and formats == {n: given[n] for n in formats}
            and str(parse_once(stage.statement)[0]) == statement
        ):
            return FrontierBase(candidate, {}, Candidate(schedule, DEFAULT, tuple(order)))
    return None


def frontier_summary(bases: list[FrontierBase], why_not: str | None) -> str:
    """What the search does with each frontier member, for the report."""
    if why_not:
        return f"none ({why_not})"
    parts = []
    for base in bases:
        name = f"#{base.member.index}"
        if base.candidate is None:
            kernels = len(base.member.stages)
            why = f"{kernels} kernels" if kernels > 1 else "another result format or statement"
            parts.append(f"{name} as a pipeline ({why})")
        elif base.conversions:
            converted = ", ".join(f"{n}→{f}" for n, f in base.conversions.items())
            parts.append(f"{name} searched ({converted})")
        else:
            parts.append(f"{name} searched")
    # (ct.autoschedule builds it within ct.config.frontier_seconds; a frontier read from the
    # disk cache, StoredMember's, is schedule="auto"'s.)
    first = bases[0].member if bases else None
    cut = isinstance(first, FrontierCandidate) and not first.frontier.complete
    deadline = " (the frontier was cut at its deadline: ct.config.frontier_seconds)" if cut else ""
    return f"{len(bases)} members{deadline}: " + "; ".join(parts)
