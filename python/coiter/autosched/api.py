"""The autoscheduler's public functions: ``ct.autoschedule`` (tune on the user's operands),
``ct.tuning_info``/``ct.clear_tuning`` (the tuning database), and the instant choice behind
``schedule="auto"`` in ``ct.compile`` and ``ct.evaluate`` (no timing runs: a database hit,
else the asymptotic frontier's member cheapest on the input statistics, else a rule from the
input statistics or the default schedule).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import _core
from ..compiler import compile as compile_kernel
from ..compiler import default_engine
from ..config import config
from ..errors import CompileError, ScheduleError
from ..evaluate import checked_operands, inferred_result_dtype
from ..format_inference import infer_result_format
from ..formats import Format, FormatLike, as_format, is_all_dense
from ..notation import accesses
from ..parser import Parsed, parse
from ..schedule import Schedule
from ..tensor import Tensor
from . import frontier_cache, trimming
from . import space as schedule_space
from .candidates import (
    DEFAULT,
    FRONTIER,
    FrontierBase,
    Problem,
    default_program,
    frontier_bases,
    frontier_summary,
    loop_order_candidates,
    members_as_bases,
    problem_frontier,
    workspace_candidates,
)
from .cost_estimate import estimated_tasks, materialized_tasks, parse_cost
from .database import (
    EXTENTS,
    Entry,
    bucket_of,
    database,
    distance,
    operand_statistics,
    signature,
    tensor_bucket,
)
from .frontier_cache import BuiltFrontier
from .pipeline import Pipeline, stages_of
from .report import Report
from .search import Measurement, PipelineCandidate, Variant, run_search

__all__ = ["autoschedule", "tuning_info", "clear_tuning", "DEFAULT_BUDGET"]

logger = logging.getLogger("coiter")

# Seconds ct.autoschedule spends by default: the issue asks for at most 2 s per signature.
DEFAULT_BUDGET = 1.5
# A dense copy of a sparse operand is tried when it has at most this many elements and is at
# least 1/16 full (a sparser one would make the kernel iterate mostly zeros).
_DENSE_COPY_LIMIT = 1 << 22
_DENSE_COPY_DENSITY = 1 / 16
# schedule="auto" reuses the tuning of the nearest inputs within this distance (the sum of
# |log2| ratios of extents, nonzeros and row lengths: a factor 16 in all, spread or not).
_NEAREST_DISTANCE = 4.0
# Untuned, schedule="auto" leaves the default schedule only for a frontier member estimated to
# do this many times less work than the default's program: the estimate assumes uniform
# sparsity and counts tasks, not their constant factors (the default's loop order also visits
# dense operands in storage order, and its outer loop is tagged parallel), so members of equal
# or nearly equal cost are no reason to leave it (MTTKRP's i,k,j,l ties with the default's
# i,k,l,j and runs about 5x slower, its innermost loop reading D by columns).
_DEFAULT_MARGIN = 2.0
# The transpose rule converts when the inner product's estimated work exceeds the outer
# product's (with the conversion) this many times.
_INNER_PRODUCT_MARGIN = 4.0

# This process's counts (ct.tuning_info).
_counts = {
    "hits": 0,
    "misses": 0,
    "tunings": 0,
    "tuning_seconds": 0.0,
    "frontier_choices": 0,
    "rule_choices": 0,
}


def _prepare(
    stmt: str | Parsed, out_format: FormatLike | None, operands: Mapping[str, Any]
) -> tuple[Problem, dict[str, Tensor]]:
    """The problem of ``stmt`` on ``operands`` (result format inferred as ct.evaluate does)."""
    parsed = parse(stmt) if isinstance(stmt, str) else stmt
    assignment, refs = parsed
    result = assignment.lhs.tensor.name
    unknown = sorted(set(operands) - set(refs) - {result})
    if unknown:
        raise TypeError(f"autoschedule: the statement has no tensor named {unknown}")
    tensors = checked_operands(assignment, refs, operands, "autoschedule")
    if out_format is None:
        fmt = infer_result_format(
            assignment.lhs.indices, assignment.rhs, lambda ref: tensors[ref.name].format
        )
    else:
        fmt = as_format(out_format, len(assignment.lhs.indices))
    formats: dict[str, FormatLike] = {n: t.format for n, t in tensors.items()}
    formats[result] = fmt
    dtypes: dict[str, DTypeLike] = {n: t.dtype for n, t in tensors.items()}
    dtypes[result] = inferred_result_dtype(assignment, tensors)
    return Problem.of(parsed, formats, dtypes), tensors


def _extents(problem: Problem, operands: Mapping[str, Tensor]) -> dict[str, int]:
    found = {}
    for access in accesses(problem.parsed[0].rhs):
        for mode, v in enumerate(access.indices):
            found[v.name] = operands[access.tensor.name].shape[mode]
    # A variable only the result reads has no extent among the operands: the result given
    # (out=) has it, else the call is refused once the kernel is chosen (ShapeError). Counted
    # as 1 meanwhile: it multiplies every member's loops alike.
    for name in problem.variables:
        found.setdefault(name, 1)
    return found


def conversion_options(problem: Problem, operands: Mapping[str, Tensor]) -> list[dict[str, Format]]:
    """The single-operand conversions the search tries: a sparse matrix in the other mode order
    (CSR <-> CSC), and a dense copy of a small, not too sparse operand."""
    options = []
    for name, t in operands.items():
        fmt = problem.formats[name]
        if is_all_dense(fmt) or fmt.name is not None:
            continue
        if t.ndim == 2:
            options.append({name: Format(list(fmt.levels), list(reversed(fmt.mode_order)))})
        if t.size <= _DENSE_COPY_LIMIT and t.nnz >= t.size * _DENSE_COPY_DENSITY:
            options.append({name: as_format("dense", t.ndim)})
    return options


def _variant(
    problem: Problem,
    operands: Mapping[str, Tensor],
    conversions: Mapping[str, Format],
    frontier: list[FrontierBase],
) -> Variant:
    """The statement on the operands with ``conversions`` made: its base candidates are the
    default, the frontier's members of one schedule on these formats, the other legal loop
    orders, and the workspaces of those that trimming.useful_workspace keeps."""
    converted = problem.with_formats(conversions)
    members = [f.candidate for f in frontier if f.candidate and f.conversions == conversions]
    taken = {m.schedule for m in members}
    loop_orders = loop_order_candidates(converted)
    # The default first, then the frontier's members in place of the loop orders they equal,
    # then the other loop orders, then workspaces over the innermost loop of each.
    bases = loop_orders[:1] + members + [b for b in loop_orders[1:] if b.schedule not in taken]
    workspaces, useless = workspace_candidates(converted, bases, trimming.useful_workspace)
    bases += workspaces
    space = schedule_space.build(
        converted,
        bases,
        trimming.PARTITION_PASSES,
        trimming.MAPPING_PASSES,
        trimming.concordant_loop_orders,
        extents=_extents(problem, operands),
        nonzeros={n: t.nnz for n, t in operands.items()},
        threads=_core.get_num_threads(),
    )
    if useless:
        space.counts.dropped_by["useful workspace"] = useless
    # (The operands as given: each timed call converts them, as schedule="auto" will.)
    return Variant(converted, dict(operands), dict(conversions), bases, space)


def _best_concordancy(variant: Variant) -> int:
    """The best concordancy score of the variant's legal loop orders (-1: none is legal)."""
    orders = [b.loop_order for b in variant.bases if b.loop_order is not None]
    return max((trimming.concordancy(o, variant.problem) for o in orders), default=-1)


def autoschedule(
    stmt: str,
    budget: float = DEFAULT_BUDGET,
    *,
    out_format: FormatLike | None = None,
    engine: str | None = None,
    progress: bool | None = None,
    conversions: bool = True,
    retune: bool = False,
    seed: int = 0,
    **operands: Any,
) -> tuple[Schedule | Pipeline, Report]:
    """Tune a schedule for ``stmt`` (``"y(i) = A(i,j) * x(j)"``) on ``operands`` (given by
    name, as for ``ct.evaluate``) within about ``budget`` seconds, and remember it in the tuning
    database. Returns ``(schedule, report)``; when ``report.conversions`` is not empty the
    schedule is for those operands converted (``ct.evaluate(..., schedule="auto")`` converts
    them itself). When the fastest program is a frontier member of two kernels, the first
    element is its :class:`~coiter.autosched.pipeline.Pipeline` (called like a kernel:
    ``pipeline(**operands)``) instead of a schedule. A database entry for the same signature
    and similar inputs is returned without timing anything, unless ``retune``.
    ``conversions=False`` keeps the given formats (and times only the pipelines that convert
    no operand); ``progress`` shows a tqdm bar (``coiter.progress``): True always, False never,
    None (the default) as ``ct.config.progress`` says, in a terminal or notebook once the
    search has run a second. The asymptotic frontier, whose members the search starts from,
    is built within ``ct.config.frontier_seconds`` (past it, that of the candidates ranked so
    far: ``report.frontier`` says so)."""
    if not isinstance(budget, (int, float)) or not budget > 0 or math.isinf(budget):
        raise ValueError(
            f"autoschedule: budget must be a positive number of seconds, not {budget!r}"
        )
    problem, tensors = _prepare(stmt, out_format, operands)
    engine = engine or default_engine()
    key = signature(problem, engine, _core.get_num_threads())
    statistics = operand_statistics(tensors)
    bucket = bucket_of(statistics)
    bases = loop_order_candidates(problem)
    if not retune:
        entry = database.lookup(key, bucket)
        if entry is not None:
            _counts["hits"] += 1
            return (
                _chosen_program(problem, entry.schedule, engine),
                _report_of_entry(problem, bases, entry),
            )
    _counts["misses"] += 1
    start = time.perf_counter()
    # (Bounded as for calls without a schedule: unbounded, order-4 MTTKRP's takes 9-11 s.)
    members, why_not = frontier_bases(problem, config.frontier_seconds)
    if why_not:
        logger.info("coiter: autoschedule %s: no frontier (%s)", problem.text, why_not)
    pipelines = _pipeline_candidates(problem, members, tensors, conversions)
    variants = [_variant(problem, tensors, {}, members)]
    promising: dict[str, Format] = {}
    if conversions:
        # The conversion the transpose rule picks first: its default is timed whatever the
        # budget (run_search), as it is what schedule="auto" would do untuned.
        options = conversion_options(problem, tensors)
        promising = transpose_rule(problem, tensors)
        options.sort(key=lambda option: option != promising)
        given_score = _best_concordancy(variants[0])
        # The conversions that frontier members read their operands in come after those.
        member_options = [m.conversions for m in members if m.candidate and m.conversions]
        options += [
            c for k, c in enumerate(member_options) if c not in options + member_options[:k]
        ]
        for option in options:
            variant = _variant(problem, tensors, option, members)
            # CPU-4 on conversions: one that leaves no loop order as concordant as the given
            # formats allow is dropped untimed (its default can be slower by orders of
            # magnitude: SDDMM with B in CSC), unless the transpose rule picked it or a
            # frontier member reads the operands so.
            if (
                option == promising
                or option in member_options
                or _best_concordancy(variant) >= given_score
            ):
                variants.append(variant)
        if promising:
            variants.insert(0, variants.pop(1))  # the rule's conversion first (run_search)
    result = run_search(
        variants,
        budget - (time.perf_counter() - start),
        engine=engine,
        progress=progress,
        seed=seed,
        pipelines=pipelines,
    )
    seconds = time.perf_counter() - start
    _counts["tunings"] += 1
    _counts["tuning_seconds"] += seconds
    best = result.best
    database.store(
        Entry(
            key,
            bucket,
            best.schedule,
            best.conversions,
            best.total,
            result.baseline.total,
            seconds,
            statistics,
        )
    )
    report = Report(
        problem.text,
        [
            b
            for k, v in enumerate(variants)
            for b in v.bases
            if k == 0 or b.origin.startswith(FRONTIER)
        ],
        result.measurements,
        best,
        result.baseline,
        seconds,
        result.strategy,
        result.space_size,
        {
            (
                ", ".join(f"{n}→{f}" for n, f in v.conversions.items()) or "given formats"
            ): v.space.counts
            for v in variants
        },
        arms=result.arms,
        frontier=frontier_summary(members, why_not),
        result_format=str(problem.formats[problem.result]),
    )
    return _chosen_program(problem, best.schedule, engine), report


def _chosen_program(problem: Problem, text: str, engine: str | None) -> Schedule | Pipeline:
    """What a tuning chose, as ``ct.autoschedule`` returns it: a schedule, or the pipeline of
    a frontier member of two kernels (compiled: its kernels are in the kernel cache)."""
    stages = stages_of(text)
    if stages is None:
        return Schedule.parse(text)
    result = problem.result
    return Pipeline(stages, problem.formats[result], problem.dtypes[result], problem.dtypes, engine)


def _pipeline_candidates(
    problem: Problem,
    members: list[FrontierBase],
    operands: Mapping[str, Tensor],
    conversions: bool,
) -> list[PipelineCandidate]:
    """The frontier members that run as pipelines, in the order the cost estimate ranks them
    (``conversions=False``: only those that convert no operand; what they convert between
    their kernels is their own). The first is schedule="auto"'s untuned choice when that is a
    pipeline."""
    ranked = ranked_members(problem, members, operands)
    untuned = ranked[0] if ranked else None
    return [
        PipelineCandidate(
            f"{FRONTIER} #{base.member.index}",
            tuple(base.member.stages),
            untuned_choice=base is untuned,
        )
        for base in ranked
        if base.candidate is None and (conversions or not _converted_operands(problem, base))
    ]


def _report_of_entry(problem: Problem, bases: list[Any], entry: Entry) -> Report:
    chosen = Measurement(entry.schedule, entry.conversions, "database", "database", entry.seconds)
    default = Measurement("", {}, "default", "default", entry.default_seconds)
    return Report(
        problem.text,
        bases,
        [],
        chosen,
        default,
        entry.tuning_seconds,
        "database",
        from_database=True,
        result_format=str(problem.formats[problem.result]),
    )


def tuning_info() -> dict[str, Any]:
    """The tuning database: ``path`` (None: in memory), ``entries``, ``signatures``, and this
    process's ``hits`` and ``misses`` (ct.autoschedule), ``tunings``, ``tuning_seconds``, and
    the choices of schedule="auto" without a database entry: ``frontier_choices`` (a frontier
    member, the default's program included) and ``rule_choices`` (the transpose rule or the
    default, for statements the frontier does not take)."""
    entries = database.entries()
    return {
        "path": database.path,
        "entries": len(entries),
        "signatures": len({e.signature for e in entries}),
        **_counts,
    }


def clear_tuning() -> None:
    """Forget every stored tuning (the next ct.autoschedule times again)."""
    database.clear()


# -- schedule="auto" (compiler.AutoScheduler) -------------------------------------------------


class InstantChoice:
    """The choice behind ``schedule="auto"``: no timing runs. Choices are remembered by
    signature and input bucket until this process's database changes (a tuning or
    ``ct.clear_tuning``) or is another (another cache directory), so a repeated
    ``ct.evaluate`` costs a dictionary lookup, not a database query; tunings stored by other
    processes meanwhile are seen by inputs not yet remembered. (ct.evaluate's own table,
    keyed by input_key, follows this process's changes and the cache directory only.)"""

    def __init__(self) -> None:
        self._remembered: dict[
            tuple[Any, ...], tuple[Any, tuple[str | Pipeline, dict[str, Format]]]
        ] = {}
        self._remembered_for_formats: dict[tuple[Any, ...], tuple[Any, str]] = {}
        # (database.state(), the statements with a stored tuning then: database.statements)
        self._tuned_statements: tuple[tuple[int, tuple[str | None, ...]], dict[str, int]] = (
            (-1, ()),
            {},
        )
        self._frontiers: dict[tuple[Any, ...], BuiltFrontier] = {}

    def for_formats(
        self,
        stmt: Parsed,
        formats: Mapping[str, Format],
        dtypes: Mapping[str, np.dtype[Any]],
        engine: str | None,
        bounded: bool = False,
    ) -> str:
        """``ct.compile``'s choice (no operands): the most recent tuning of this signature that
        is one kernel on these formats, else the frontier member that is one schedule of the
        statement on these formats, cheapest on nominal statistics (nominal_statistics), else
        the default schedule. ``bounded`` (no schedule given): the frontier is built within
        ``ct.config.frontier_seconds`` (_frontier_of)."""
        engine = engine or default_engine()
        memo = (*_memo_key(stmt, formats, dtypes, engine), bounded)
        remembered = self._remembered_for_formats.get(memo)
        state = database.state()
        if remembered is not None and remembered[0] == state:
            return remembered[1]
        problem = Problem.of(stmt, formats, dtypes)
        key = signature(problem, engine, memo[4])
        entry = database.nearest(key, None, without_conversions=True)
        schedule = ""
        if entry is not None:
            schedule = entry.schedule
        else:
            built = self._frontier_of(problem, bounded)
            kernels = [b for b in built.bases if b.candidate is not None and not b.conversions]
            picked = instant_member(problem, kernels, built.default, *nominal_statistics(problem))
            if picked is not None:
                _counts["frontier_choices"] += 1
                chosen, _ = _as_choice(problem, picked, engine)
                assert isinstance(chosen, str)  # (a member of one schedule is chosen as its text)
                schedule = chosen
        self._remembered_for_formats[memo] = (state, schedule)
        return schedule

    def input_key(
        self, stmt: Parsed | None, operands: Mapping[str, Tensor]
    ) -> tuple[Any, tuple[int, tuple[str | None, ...]]]:
        """The operands' statistics bucket, and which database it was read for: the
        database's generation in this process and the cache directory's setting
        (cache_directory.py: another directory is another database). The bucket reads only
        what the choice can depend on: without a tuning of the statement, extents and
        nonzeros (the frontier's ranking, the transpose rule); with one, also the mean row
        length (the nearest tuning's distance); the row skew, whose maximum row length reads
        every row of every sparse operand on every call, only when two of its tunings differ
        in the skew alone (database.statements). (The statements'
        tunings are read once per generation and directory: one that another process tunes
        meanwhile is keyed so from this process's next change of the database.)"""
        which = database.state()
        if self._tuned_statements[0] != which:
            self._tuned_statements = (which, database.statements())
        depth = EXTENTS
        if stmt is not None:
            depth = self._tuned_statements[1].get(_statement_text(stmt), EXTENTS)
        key = tuple((n, tensor_bucket(operands[n], depth)) for n in sorted(operands))
        return key, which

    def for_operands(
        self,
        stmt: Parsed,
        operands: Mapping[str, Tensor],
        formats: Mapping[str, Format],
        dtypes: Mapping[str, np.dtype[Any]],
        engine: str | None,
        bounded: bool = False,
    ) -> tuple[str | Pipeline, dict[str, Format]]:
        """``ct.evaluate``'s choice: (schedule text, operands to convert first), or a frontier
        member's kernels. The tuning of these inputs' bucket, else of the nearest inputs tuned
        (within _NEAREST_DISTANCE), else the frontier member cheapest on these inputs'
        statistics (instant_member), else (a statement the frontier does not take) the
        transpose rule, else the default schedule. ``bounded`` (no schedule given): the
        frontier is built within ``ct.config.frontier_seconds`` (_frontier_of)."""
        statistics = operand_statistics(operands)
        bucket = bucket_of(statistics)
        memo = (*_memo_key(stmt, formats, dtypes, engine or default_engine()), bounded, bucket)
        remembered = self._remembered.get(memo)
        state = database.state()
        if remembered is not None and remembered[0] == state:
            return remembered[1]
        problem = Problem.of(stmt, formats, dtypes)
        key = signature(problem, memo[3], memo[4])
        entry = database.lookup(key, bucket) or database.nearest(key, statistics)
        choice: tuple[str | Pipeline, dict[str, Format]]
        if entry is not None and distance(entry.statistics, statistics) <= _NEAREST_DISTANCE:
            stages = stages_of(entry.schedule)
            if stages is not None:  # a tuning that chose a frontier member of two kernels
                result = problem.result
                choice = (
                    Pipeline(stages, formats[result], dtypes[result], problem.dtypes, memo[3]),
                    {},
                )
            else:
                choice = (
                    entry.schedule,
                    {n: as_format(f, operands[n].ndim) for n, f in entry.conversions.items()},
                )
        else:
            built = self._frontier_of(problem, bounded)
            picked = instant_member(
                problem, built.bases, built.default, *_statistics_of(problem, operands)
            )
            if picked is not None:
                _counts["frontier_choices"] += 1
                choice = _as_choice(problem, picked, memo[3])
            else:
                # Statements the asymptotic stage does not schedule (sums, literals, ...).
                logger.info(
                    "coiter: schedule='auto' for %s: %s; using the transpose rule instead of "
                    "the frontier",
                    problem.text,
                    built.why_not,
                )
                _counts["rule_choices"] += 1
                choice = "", transpose_rule(problem, operands)
        self._remembered[memo] = (state, choice)
        return choice

    def _frontier_of(self, problem: Problem, bounded: bool = False) -> BuiltFrontier:
        """The problem's frontier members and default_program: remembered per statement,
        formats and dtypes in this process, and kept in the disk cache (frontier_cache.py),
        so that it is built once per machine (the frontier depends on formats and dtypes
        only). ``bounded`` (no schedule given): built within ``ct.config.frontier_seconds``
        (past it, the frontier of the candidates ranked so far, logged at INFO); else
        complete."""
        seconds = config.frontier_seconds if bounded else None
        key = (
            problem.text,
            tuple(sorted((n, str(f)) for n, f in problem.formats.items())),
            tuple(sorted((n, d.name) for n, d in problem.dtypes.items())),
        )
        found = self._frontiers.get(key)
        if found is not None and found.serves(seconds):
            return found
        found = frontier_cache.load(problem)
        if found is None or not found.serves(seconds):
            built = problem_frontier(problem, seconds)
            if isinstance(built, str):
                found = BuiltFrontier([], built, None, True, None)
            else:
                bases, why_not = members_as_bases(problem, built)
                cut = None if built.complete else seconds
                default = default_program(problem, bases)
                found = BuiltFrontier(_distinct(bases), why_not, default, built.complete, cut)
            frontier_cache.store(problem, found)
        self._frontiers[key] = found
        return found


def _distinct(bases: list[FrontierBase]) -> list[FrontierBase]:
    """The members the instant choice can tell apart: of the members equal in cost, in their
    kernels' statements and formats (schedules aside), in the operands they convert and in
    being a schedule or a pipeline, the first (they rank alike on any statistics, :func:`_estimate`,
    and the first wins the tie). MTTKRP's 282 members are 140 such, order-4 MTTKRP's cut
    frontier's 552 are 384: the ranking is on a first call's path."""
    seen = set()
    kept = []
    for base in bases:
        key = (
            base.member.cost,
            tuple(
                (s.statement, tuple(sorted(s.formats.items())), s.result)
                for s in base.member.stages
            ),
            tuple(sorted(base.conversions)),
            base.candidate is None,
        )
        if key not in seen:
            seen.add(key)
            kept.append(base)
    return kept


def _memo_key(
    stmt: Parsed,
    formats: Mapping[str, Format],
    dtypes: Mapping[str, np.dtype[Any]],
    engine: str,
) -> tuple[Any, ...]:
    """What a choice depends on besides the inputs and the database: the signature's parts
    (statement, formats, dtypes, engine, thread count)."""
    return (
        _statement_text(stmt),
        tuple(sorted((n, str(f)) for n, f in formats.items())),
        tuple(sorted((n, np.dtype(d).name) for n, d in dtypes.items())),
        engine,
        _core.get_num_threads(),
    )


def _statement_text(stmt: Parsed) -> str:
    """The statement as tuning signatures print it (remembered per statement: it is read on
    every schedule="auto" call)."""
    assignment = stmt[0]
    text = _statement_texts.get(id(assignment))
    if text is None or text[0] is not assignment:
        text = (assignment, str(assignment))
        _statement_texts[id(assignment)] = text
        if len(_statement_texts) > _STATEMENT_TEXTS_KEPT:
            _statement_texts.pop(next(iter(_statement_texts)))
    return text[1]


# _statement_text's table, by the statement object's id (the entry keeps the object, so the
# id is not reused while it is in the table); ct.evaluate parses each text once
# (parser.parse_once), so its statements repeat.
_STATEMENT_TEXTS_KEPT = 256
_statement_texts: dict[int, tuple[Any, str]] = {}


def cheapest_member(
    problem: Problem, bases: list[FrontierBase], operands: Mapping[str, Tensor]
) -> FrontierBase | None:
    """The frontier member with the fewest estimated tasks on these operands (cost_estimate.py:
    its cost evaluated with their extents and nonzeros), plus what it writes and converts
    between its kernels (its workspace, the result written transposed) and the nonzeros of
    the operands it converts; on a tie, the member converting fewest operands, then the one
    of fewest kernels (None: no member)."""
    ranked = ranked_members(problem, bases, operands)
    return ranked[0] if ranked else None


def ranked_members(
    problem: Problem, bases: list[FrontierBase], operands: Mapping[str, Tensor]
) -> list[FrontierBase]:
    """The frontier members, cheapest first as :func:`cheapest_member` ranks them."""
    return _ranked(problem, bases, *_statistics_of(problem, operands))


def instant_member(
    problem: Problem,
    bases: list[FrontierBase],
    default: FrontierBase | None,
    extents: Mapping[str, int],
    shapes: Mapping[str, tuple[int, ...]],
    nonzeros: Mapping[str, int],
) -> FrontierBase | None:
    """schedule="auto"'s untuned pick on these statistics: the cheapest member (as
    :func:`cheapest_member` ranks them), unless ``default`` (the default's program,
    candidates.default_program) is estimated within _DEFAULT_MARGIN of it: then ``default``,
    which runs as the default schedule (None: no member)."""
    known: dict[Any, float] = {}
    first = _first_ranked(problem, bases, extents, shapes, nonzeros, known)
    if first is None:
        return None
    if default is not None:
        cheapest = _estimate(problem, first, extents, shapes, nonzeros, known)[0]
        estimate = _estimate(problem, default, extents, shapes, nonzeros, known)[0]
        if estimate <= _DEFAULT_MARGIN * cheapest:
            return default
    return first


def _first_ranked(
    problem: Problem,
    bases: list[FrontierBase],
    extents: Mapping[str, int],
    shapes: Mapping[str, tuple[int, ...]],
    nonzeros: Mapping[str, int],
    known: dict[Any, float],
) -> FrontierBase | None:
    """The first of :func:`_ranked`'s order, without estimating every member whole: a
    member's rank without what its kernels write (:func:`_estimate`, ``written=False``) is
    never after its rank, so the members are visited in that order until it ranks after the
    best found. (Estimating what kernels write parses their statements: on a first call, the
    parser's time for MTTKRP's dozens of pipeline kernels.)"""
    best: FrontierBase | None = None
    best_rank: tuple[float, int, int, int] | None = None
    bound = {
        id(b): _estimate(problem, b, extents, shapes, nonzeros, known, written=False) for b in bases
    }
    for base in sorted(bases, key=lambda b: bound[id(b)]):
        if best_rank is not None and bound[id(base)] > best_rank:
            break
        rank = _estimate(problem, base, extents, shapes, nonzeros, known)
        if best_rank is None or rank < best_rank:
            best, best_rank = base, rank
    return best


def _statistics_of(
    problem: Problem, operands: Mapping[str, Tensor]
) -> tuple[dict[str, int], dict[str, tuple[int, ...]], dict[str, int]]:
    """(extents by index variable, shapes and nonzeros by operand): what the ranking reads."""
    return (
        _extents(problem, operands),
        {n: t.shape for n, t in operands.items()},
        {n: int(t.nnz) for n, t in operands.items()},
    )


def _ranked(
    problem: Problem,
    bases: list[FrontierBase],
    extents: Mapping[str, int],
    shapes: Mapping[str, tuple[int, ...]],
    nonzeros: Mapping[str, int],
    known: dict[Any, float] | None = None,
) -> list[FrontierBase]:
    """The members ranked on statistics: extents by index variable, shapes and nonzeros by
    operand (``known`` as for :func:`_estimate`)."""
    known = {} if known is None else known
    return sorted(
        bases, key=lambda base: _estimate(problem, base, extents, shapes, nonzeros, known)
    )


def _estimate(
    problem: Problem,
    base: FrontierBase,
    extents: Mapping[str, int],
    shapes: Mapping[str, tuple[int, ...]],
    nonzeros: Mapping[str, int],
    known: dict[Any, float] | None = None,
    written: bool = True,
) -> tuple[float, int, int, int]:
    """A member's rank: estimated tasks (with what it materializes and converts), then the
    operands it converts, its kernels and its index. ``known``: the estimates of costs and
    kernels already made on these statistics, filled in here (members share them: MTTKRP's
    140 distinct members have one cost, and the ranking is on a first call's path).
    ``written`` False: without what the kernels write (a lower bound of the rank)."""
    known = {} if known is None else known
    cost = ("cost", base.member.cost)
    if cost not in known:
        known[cost] = estimated_tasks(parse_cost(base.member.cost), extents, shapes, nonzeros)
    tasks = known[cost]
    if written:
        # (What kernels write depends on their statements and formats, not on schedules.)
        kernels = (
            "kernels",
            tuple(
                (s.statement, tuple(sorted(s.formats.items())), s.result)
                for s in base.member.stages
            ),
        )
        if kernels not in known:
            known[kernels] = materialized_tasks(
                base.member.stages, problem.formats[problem.result], extents, shapes, nonzeros
            )
        tasks += known[kernels]
    converted = _converted_operands(problem, base)
    tasks += sum(nonzeros[n] for n in converted)
    return tasks, len(converted), len(base.member.stages), base.member.index


# ct.compile's statistics-free choice (nominal_statistics): every index variable this long,
# a sparse operand this many nonzeros per fiber of its last stored mode.
NOMINAL_EXTENT = 4096
NOMINAL_FIBER = 8


def nominal_statistics(
    problem: Problem,
) -> tuple[dict[str, int], dict[str, tuple[int, ...]], dict[str, int]]:
    """(extents, shapes, nonzeros) that stand in for operands ``ct.compile`` does not have:
    every extent NOMINAL_EXTENT, a dense operand full, a sparse one NOMINAL_FIBER nonzeros per
    fiber (per row of a matrix), spread uniformly. The ranking then prefers fewer tasks
    where the data is as sparse as typical sparse inputs; it is the frontier's pick for those,
    not for every input (a tuning, or ct.evaluate's choice on the real operands, is)."""
    extents = {v: NOMINAL_EXTENT for v in problem.variables}
    shapes: dict[str, tuple[int, ...]] = {}
    nonzeros: dict[str, int] = {}
    for access in accesses(problem.parsed[0].rhs):
        name = access.tensor.name
        shape = tuple(NOMINAL_EXTENT for _ in access.indices)
        full = math.prod(shape)
        shapes[name] = shape
        if is_all_dense(problem.formats[name]) or not shape:
            nonzeros[name] = full
        else:
            nonzeros[name] = min(full, NOMINAL_FIBER * full // NOMINAL_EXTENT)
    return extents, shapes, nonzeros


def _converted_operands(problem: Problem, base: FrontierBase) -> set[str]:
    """The operands a member reads in another format than the given one."""
    if base.candidate is not None:
        return set(base.conversions)
    return {
        n
        for stage in base.member.stages
        for n, f in stage.formats.items()
        if n in problem.formats
        and n != problem.result
        and as_format(f, len(problem.levels[n])) != problem.formats[n]
    }


def _as_choice(
    problem: Problem, base: FrontierBase, engine: str
) -> tuple[str | Pipeline, dict[str, Format]]:
    """A frontier member as schedule="auto"'s choice: its schedule and conversions, or its
    kernels (compiled now, as ct.evaluate would compile one). A member whose program is the
    default schedule's on the same formats is the default: the default also parallelizes its
    outer loop, whose code runs faster even on one thread (SpGEMM's row-by-row product by
    about 20%)."""
    if base.candidate is None:
        return base.member.pipeline(engine), {}
    if base.candidate.origin == DEFAULT:  # (candidates.default_program: nothing to compare)
        return "", {}
    converted = problem.with_formats(base.conversions)

    def program(schedule: str) -> str:
        kernel = compile_kernel(
            converted.parsed,
            formats=converted.formats,
            dtypes=converted.dtypes,
            schedule=schedule,
            engine=engine,
        )
        return kernel.concrete.split(" | ")[0]  # (the loop tags follow " | ")

    try:
        default = program("")
    except (CompileError, ScheduleError):
        # (No default on these formats: ct.evaluate would convert operands for one.)
        return base.candidate.schedule, dict(base.conversions)
    same = default == program(base.candidate.schedule)
    return ("" if same else base.candidate.schedule), dict(base.conversions)


def transpose_rule(problem: Problem, operands: Mapping[str, Tensor]) -> dict[str, Format]:
    """The rule from input statistics: when a summed variable is stored last in two sparse
    matrices (``C(i,j) = A(i,t) B(j,t)``, both CSR), the kernel intersects two rows per result
    entry, about ``|i|·|j|·(row(A) + row(B))`` steps; transposing the second one (CSC) makes a
    row-by-row product (Gustavson) of about ``nnz(A)·nnz(B)/|t| + nnz(B)`` steps. Convert when
    that is _INNER_PRODUCT_MARGIN times less and the converted statement has a legal default."""
    summed = set(problem.summed)
    last: dict[str, list[str]] = {}
    for name, levels in problem.levels.items():
        if (
            name in operands
            and len(levels) == 2
            and levels[-1].kind == "compressed"
            and levels[-1].variable in summed
            and problem.formats[name].name is None
        ):
            last.setdefault(levels[-1].variable, []).append(name)
    extents = _extents(problem, operands)
    for t, names in last.items():
        if len(names) < 2:
            continue
        a, b = operands[names[0]], operands[names[1]]
        free = [lv.variable for n in names[:2] for lv in problem.levels[n] if lv.variable != t]
        inner = math.prod(extents[v] for v in free) * (
            a.nnz / max(1, a.shape[0]) + b.nnz / max(1, b.shape[0])
        )
        outer = a.nnz * b.nnz / max(1, extents[t]) + b.nnz
        if inner < _INNER_PRODUCT_MARGIN * outer:
            continue
        fmt = problem.formats[names[1]]
        transposed = Format(list(fmt.levels), list(reversed(fmt.mode_order)))
        if problem.with_formats({names[1]: transposed}).legality("") is None:
            return {names[1]: transposed}
    return {}


instant_choice = InstantChoice()
