"""The empirical search: time schedules on the user's operands under a budget of seconds.

Each *variant* is the statement on one choice of operand formats: the formats given, or one
operand converted (a transpose, a dense copy: Finch's Galley converts formats the same way).
A variant has its base candidates (candidates.py) and its schedule space (space.py). Every
call the search times is what ``schedule="auto"`` replays on each call once the schedule is
stored: the variant's conversions of the operands as given, then the kernel. The search
times, in order:

1. the default schedule on the given formats (the baseline every speedup is relative to), then
   the default on each converted variant: the first conversion (the most promising: the
   caller's order) even past the budget, the others while it lasts;
2. the frontier's members of two kernels (pipeline.py), each call with the conversions it
   makes, in the order the cost estimate ranks them: the first (what ``schedule="auto"`` runs
   untuned) even past the budget, the others while it lasts;
3. the rest, exhaustively when the budget fits every schedule at the cost seen so far, else by
   Thompson sampling: each *arm* (a variant's base loop order and partition, the search paper's
   "split schedule") has a Gaussian posterior over the log of its schedules' time relative to
   the baseline; each round samples every arm's posterior, draws an untried schedule from the
   arm with the smallest sample, times it and updates that arm;
4. the fastest against the baseline once more, their calls interleaved (confirm): the winner is
   kept only when the median of its calls is _MARGIN faster than the baseline's, else the
   baseline is the choice. Each schedule was timed alone, at another moment and after other
   calls (a kernel that writes a large result runs slower after calls that allocated memory
   differently), so a small lead in the search is no evidence; a stored tuning is never
   slower than the default on the inputs it was tuned on.

Kernels are timed as ``benchmarks/`` times them: a warm-up call (whose result is checked against
the baseline's: a schedule never changes results, and one that does is dropped and logged as the
compiler bug it is), then the median of several calls. A search over more than about a second
shows coiter's progress bar (coiter.progress: tqdm, in a terminal or a notebook, or when asked),
over the budget's seconds, with the schedules timed and the best time so far.
"""

from __future__ import annotations

import gc
import logging
import math
import os
import random
import signal
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import _core
from ..compiler import compile as compile_kernel
from ..errors import CompileError, ScheduleError
from ..evaluate import converted
from ..formats import Format, is_all_dense
from ..progress import Progress
from ..progress import progress as progress_bar
from ..tensor import Tensor
from . import space as schedule_space
from .candidates import Candidate, Problem
from .pipeline import KernelStage, Pipeline, describe, pipeline_text

logger = logging.getLogger("coiter")

# Timing of one schedule: calls until this share of the budget is spent, within these bounds.
_MIN_CALLS, _MAX_CALLS = 3, 15
_SHARE_OF_BUDGET = 0.04
# Thompson sampling: prior N(0, 1) over log(time / baseline) per arm; noise variance of one
# schedule's log time around its arm's mean (schedules of one arm differ by their parameters).
_PRIOR_VARIANCE = 1.0
_NOISE_VARIANCE = 0.25
_STOPPED = "stopped"
# Results beyond this many elements are compared entry by entry instead of densely.
_DENSE_COMPARISON_LIMIT = 4_000_000
# The final comparison (confirm): the search's winner is kept only when the median of its
# interleaved calls is this many times faster than the baseline's; those rounds of one call
# each, at least and at most, in this share of the budget (kept back from the search).
_MARGIN = 1.05
_CONFIRM_ROUNDS = (6, 16)  # (even: interleaved_medians calls in pairs of rounds)
_CONFIRM_SHARE = 0.2
# A baseline this many times slower than the winner in one call (a default that takes seconds
# a call) is not called again to confirm it.
_HOPELESS = 4.0


@dataclass
class Variant:
    """The statement on one choice of formats: the operands as given, the conversions each
    call makes first (name -> format: as ``schedule="auto"`` converts them on every call), the
    base candidates and the schedule space."""

    problem: Problem
    operands: dict[str, Tensor]
    conversions: dict[str, Format]
    bases: list[Candidate]
    space: schedule_space.Space


@dataclass(frozen=True)
class PipelineCandidate:
    """A frontier member of two kernels, timed as a whole (its kernels and the conversions its
    calls make): where it comes from (``frontier #k``), its kernels, and whether it is what
    ``schedule="auto"`` runs without a tuning (timed whatever the budget: a stored tuning is
    then never slower than that choice)."""

    origin: str
    stages: tuple[KernelStage, ...]
    untuned_choice: bool = False


@dataclass
class Measurement:
    """One timed schedule. ``total`` is the median of its calls, each converting the operands
    first as ``schedule="auto"`` does (``conversion_seconds``: the median conversion of those
    calls, ``seconds``: the rest, the kernel's share); ``error`` says why it was not timed (it
    failed to compile, or changed the result). A pipeline's ``schedule`` is its pipeline_text,
    and its ``seconds`` include the conversions its calls make."""

    schedule: str
    conversions: dict[str, str]
    origin: str
    arm: str
    seconds: float = math.inf
    conversion_seconds: float = 0.0
    compile_seconds: float = 0.0
    calls: int = 0
    error: str | None = None

    @property
    def total(self) -> float:
        return self.seconds + self.conversion_seconds

    @property
    def stopped(self) -> bool:
        """The call was stopped over time: ``seconds`` is a lower bound."""
        return self.error is not None and self.error.startswith(_STOPPED)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule,
            "conversions": self.conversions,
            "origin": self.origin,
            "arm": self.arm,
            "seconds": self.seconds,
            "conversion_seconds": self.conversion_seconds,
            "compile_seconds": self.compile_seconds,
            "calls": self.calls,
            "error": self.error,
        }


@dataclass(frozen=True)
class Confirmation:
    """The search's fastest schedule against the baseline, called interleaved (confirm): the
    medians of their calls, the rounds, and whether the winner was kept (faster by _MARGIN)."""

    baseline_seconds: float
    winner_seconds: float
    rounds: int
    kept: bool


@dataclass
class SearchResult:
    """What the search timed; ``best`` is the choice (the baseline unless confirmed faster),
    ``confirmation`` how that was decided (None: the baseline was the fastest timed, or too
    slow to call again: _HOPELESS)."""

    measurements: list[Measurement]
    baseline: Measurement
    best: Measurement
    seconds: float
    strategy: str  # "exhaustive" or "thompson sampling"
    space_size: int | None  # schedules in the space (None: not counted, it is large)
    arms: dict[str, tuple[int, float]] = field(default_factory=dict)  # arm: (timed, mean log)
    confirmation: Confirmation | None = None


def call_clock() -> Callable[[], float]:
    """The clock that times a schedule's calls: on one thread, the thread's CPU time, else wall
    time (the CPU times of several threads would add up). On a busy machine the scheduler
    takes the core away from single calls (on a shared 2-core machine, a 1.5 ms kernel took
    1.4-1.9 ms of CPU time and 1.4-5.8 ms of wall time, call after call): that time is not the
    schedule's, and it would decide between schedules by chance."""
    return time.thread_time if _core.get_num_threads() == 1 else time.perf_counter


def time_calls(fn: Callable[[], object], budget: float, warm: bool = False) -> tuple[float, int]:
    """(median seconds, calls) of ``fn`` after one warm-up call (none when ``warm``): at least
    _MIN_CALLS, more while ``budget`` seconds last, at most _MAX_CALLS. The cyclic garbage
    collector is off meanwhile, as in benchmarks/timing.py (results are freed by reference
    counting); unlike there, no collection runs first: in a user's process with a large heap
    one costs tens of milliseconds, a kernel's worth of budget."""
    if not warm:
        fn()
    runs: list[float] = []
    gc.disable()
    try:
        clock = call_clock()
        start = time.perf_counter()
        while len(runs) < _MIN_CALLS or (
            len(runs) < _MAX_CALLS and time.perf_counter() - start < budget
        ):
            t = clock()
            result = fn()
            runs.append(clock() - t)
            del result
    finally:
        gc.enable()
    return statistics.median(runs), len(runs)


def interleaved_medians(
    first: Callable[[], object],
    second: Callable[[], object],
    budget: float,
    clock: Callable[[], float] | None = None,
) -> tuple[float, float, int]:
    """(median seconds of ``first``, of ``second``, rounds): rounds of one call of each, in
    pairs of alternating order (``first`` then ``second``, then ``second`` then ``first``), so
    that neither gains from running after the other (a cache the other warmed, memory it
    freed) and each median has as many calls of both places; at least _CONFIRM_ROUNDS[0]
    rounds, more while ``budget`` seconds last, at most _CONFIRM_ROUNDS[1]. The cyclic garbage
    collector is off meanwhile, as in time_calls. ``clock``: call_clock()'s, unless given."""
    clock = clock or call_clock()
    least, most = _CONFIRM_ROUNDS
    times: tuple[list[float], list[float]] = ([], [])
    calls = (first, second)
    gc.disable()
    try:
        start = clock()
        rounds = 0
        while rounds < least or (rounds < most and clock() - start < budget):
            for k in (0, 1, 1, 0):
                t = clock()
                result = calls[k]()
                times[k].append(clock() - t)
                del result
            rounds += 2
    finally:
        gc.enable()
    return statistics.median(times[0]), statistics.median(times[1]), rounds


class OverTime(Exception):
    """A call stopped by call_within's time limit."""


def call_within(fn: Callable[[], Any], limit: float | None) -> Any:
    """``fn()``, stopped after ``limit`` seconds (None: no limit) by the kernels' interrupt: a
    SIGINT to this process, which a running kernel checks at every loop around another and
    answers with KeyboardInterrupt (docs/compiler.md, "Interrupting a kernel"); raises
    OverTime then. Only in the main thread and under Python's own SIGINT handler: a program
    with a handler of its own (which a SIGINT would trigger) runs ``fn`` to its end. A user's
    Ctrl-C meanwhile still raises KeyboardInterrupt."""
    if (
        limit is None
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        return fn()
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(limit, fire)
    timer.daemon = True
    try:
        timer.start()  # (inside: on a busy machine the limit may pass before start returns)
        return fn()
    except KeyboardInterrupt:
        if not fired.is_set():
            raise
        raise OverTime from None
    finally:
        # (A handler may also run as _stop_timer starts, before its own try: once that
        # escaped as KeyboardInterrupt instead of OverTime. Entering a try checks no signal.)
        while True:
            try:
                _stop_timer(fired, timer)
                break
            except KeyboardInterrupt:
                if not fired.is_set():
                    raise


def _stop_timer(fired: threading.Event, timer: threading.Timer) -> None:
    """Cancel call_within's timer and take the KeyboardInterrupts its SIGINT still owes: Python's
    own handler runs at the next bytecode after the signal, besides the kernel's exception,
    and a signal sent just as ``fn`` returned has not been answered at all. Python runs
    pending handlers within microseconds; 20 ms of short sleeps is ample."""
    deadline = time.monotonic() + 0.02
    while True:
        try:
            timer.cancel()
            timer.join()
            if not fired.is_set():
                return
            while time.monotonic() < deadline:
                time.sleep(0.001)
            return
        except KeyboardInterrupt:
            if not fired.is_set():
                raise


def same_result(a: Tensor, b: Tensor) -> bool:
    """Whether two results agree up to floating-point reassociation."""
    if a.shape != b.shape:
        return False
    if a.format == b.format and _same_structure(a, b):
        # The common case, and linear: the same levels, entry for entry.
        return bool(np.allclose(a.values, b.values, rtol=1e-9, atol=_atol(b.values)))
    if a.ndim == 2 and math.prod(a.shape) > _DENSE_COMPARISON_LIMIT:
        x, y = a.to_scipy().tocsr(), b.to_scipy().tocsr()
        difference = (x - y).tocsr()
        largest = np.abs(difference.data).max(initial=0)
        return bool(largest <= 1e-9 * np.abs(y.data).max(initial=0) + 1e-12)
    if math.prod(a.shape) <= _DENSE_COMPARISON_LIMIT:
        x, y = a.to_numpy(), b.to_numpy()
        return bool(
            np.allclose(x, y, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(y).max(initial=0))))
        )
    entries = []
    for t in (a, b):
        coords, values = t.coords()
        keep = values != 0
        coords, values = coords[keep], values[keep]
        order = np.lexsort(coords.T[::-1]) if coords.size else np.arange(0)
        entries.append((coords[order], values[order]))
    (ca, va), (cb, vb) = entries
    return ca.shape == cb.shape and bool(np.array_equal(ca, cb)) and bool(np.allclose(va, vb))


def _same_structure(a: Tensor, b: Tensor) -> bool:
    arrays = zip(a._storage.level_arrays, b._storage.level_arrays)
    return all(
        x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x) for x, y in arrays
    )


def _atol(values: Any) -> float:
    return 1e-9 * max(1.0, float(np.abs(values).max(initial=0)))


class _Replay:
    """One call of what a stored tuning runs (ct.evaluate's ``schedule="auto"``): the operands
    as given, each of ``conversions`` converted (evaluate.converted), then the kernel or
    pipeline. The seconds each call spent converting are kept (``conversion_times``)."""

    def __init__(
        self,
        built: Callable[..., Tensor],
        operands: Mapping[str, Tensor],
        conversions: Mapping[str, Format],
    ) -> None:
        self.built = built
        self.operands = dict(operands)
        self.conversions = dict(conversions)
        self.conversion_times: list[float] = []
        self.clock = call_clock()

    def __call__(self) -> Tensor:
        if not self.conversions:
            return self.built(**self.operands)
        start = self.clock()
        given = converted(self.operands, self.conversions)
        self.conversion_times.append(self.clock() - start)
        return self.built(**given)

    def conversion_seconds(self, calls: int) -> float:
        """The median conversion of the last ``calls`` calls (0: none converts)."""
        recent = self.conversion_times[-calls:]
        return statistics.median(recent) if recent else 0.0


class _Runner:
    """Compiles, checks and times schedules of the variants, and keeps what each timed
    measurement calls (``replays``, by id of the measurement) for the final comparison."""

    def __init__(self, variants: list[Variant], engine: str | None, budget: float) -> None:
        self.variants = variants
        self.engine = engine
        self.budget = budget
        self.reference: Tensor | None = None
        self.best = math.inf  # the fastest total so far
        self.replays: dict[int, _Replay] = {}

    def measure(self, variant: Variant, schedule: str, origin: str, arm: str) -> Measurement:
        m = Measurement(schedule, {n: str(f) for n, f in variant.conversions.items()}, origin, arm)
        problem = variant.problem
        return self._built_and_timed(
            m,
            variant,
            lambda: compile_kernel(
                problem.parsed,
                formats=problem.formats,
                dtypes=problem.dtypes,
                index_dtype=_index_dtype(variant.operands),
                schedule=schedule,
                engine=self.engine,
            ),
        )

    def measure_pipeline(self, variant: Variant, candidate: PipelineCandidate) -> Measurement:
        """Time a pipeline on ``variant``'s operands (the given formats): its kernels compile
        with their schedules judged as every schedule is (ScheduleError: not timed), and its
        first result is checked against the baseline's."""
        m = Measurement(pipeline_text(candidate.stages), {}, candidate.origin, _PIPELINES)
        problem = variant.problem
        return self._built_and_timed(
            m,
            variant,
            lambda: Pipeline(
                candidate.stages,
                problem.formats[problem.result],
                problem.dtypes[problem.result],
                problem.dtypes,
                self.engine,
            ),
        )

    def _built_and_timed(
        self, m: Measurement, variant: Variant, build: Callable[[], Callable[..., Tensor]]
    ) -> Measurement:
        """Compile what ``build`` makes (a kernel or a pipeline; CompileError or ScheduleError
        is recorded in ``m``, not timed), then check and time its calls on ``variant``'s
        operands."""
        start = time.perf_counter()
        try:
            built = build()
        except (CompileError, ScheduleError) as error:
            m.error = f"{type(error).__name__}: {error}"
            return m
        m.compile_seconds = time.perf_counter() - start
        # (A pipeline converts what it reads itself: it is called on the given formats.)
        conversions = variant.conversions if m.conversions else {}
        replay = _Replay(built, variant.operands, conversions)
        self._time(m, replay)
        if m.error is None:
            self.replays[id(m)] = replay
        return m

    def _time(self, m: Measurement, call: _Replay) -> Measurement:
        """Check ``call``'s first result and time it (``m`` filled in and returned)."""
        schedule = m.schedule
        # The first call's result is checked; the second call's time decides how to time the
        # rest (a first call pays for fresh result memory). A first call four times slower
        # than the best schedule so far and than its share of the budget is the only one.
        share = self.budget * _SHARE_OF_BUDGET
        # Past the baseline, a first call is stopped when it is hopeless: a black hole of the
        # space (a split of a compressed loop outside its parent) can take seconds a call.
        limit = None if self.reference is None else max(2 * share, 4 * self.best)
        clock = call_clock()
        start, started = time.perf_counter(), clock()
        try:
            result = call_within(call, limit)
        except OverTime:
            m.error = f"{_STOPPED} after {limit:.2g} s (4 times the best so far)"
            m.seconds = time.perf_counter() - start
            return m
        first = clock() - started
        if self.reference is None:
            self.reference = result
        elif not same_result(result, self.reference):
            m.error = "changed the result (a compiler bug: please report it)"
            logger.warning("coiter: schedule %r %s", schedule, m.error)
            return m
        del result
        if first >= max(4 * share, 4 * self.best):
            # Too slow to call again (even the baseline: a second call of it would take a
            # budget's worth); the first call's time, fresh memory and all, is the time.
            return self._timed(m, call, first, 1)
        started = clock()
        call()
        second = clock() - started
        if second >= share:
            # A slow schedule is not called again: one call tells it is slow, and repeating it
            # would spend the budget that faster schedules need.
            return self._timed(m, call, second, 1)
        return self._timed(m, call, *time_calls(call, share, warm=True))

    def _timed(self, m: Measurement, call: _Replay, total: float, calls: int) -> Measurement:
        """``m`` with the median ``total`` of its last ``calls`` calls, split into conversion
        and kernel."""
        m.conversion_seconds = call.conversion_seconds(calls)
        m.seconds, m.calls = total - m.conversion_seconds, calls
        self.best = min(self.best, m.total)
        return m


def _index_dtype(operands: Mapping[str, Tensor]) -> np.dtype[Any] | None:
    """The sparse operands' index width when they share one that is not the compiler's first
    guess (int32): a kernel then compiles once, not once per width."""
    widths = {t.index_dtype for t in operands.values() if not is_all_dense(t.format)}
    wide = np.dtype(np.int64)
    return wide if widths == {wide} else None


def run_search(
    variants: list[Variant],
    budget: float,
    *,
    engine: str | None = None,
    progress: bool | None = None,
    seed: int = 0,
    pipelines: Sequence[PipelineCandidate] = (),
) -> SearchResult:
    """Search ``variants`` (one of them the given formats) and ``pipelines`` (on the given
    formats, most promising first) for ``budget`` seconds."""
    start = time.perf_counter()
    rng = random.Random(seed)
    runner = _Runner(variants, engine, budget)
    with progress_bar(round(budget, 1), "autoschedule", "s", show=progress) as bar:
        result = _search(
            variants, pipelines, budget * (1 - _CONFIRM_SHARE), runner, rng, start, bar
        )
        result = confirm(result, runner.replays, budget - (time.perf_counter() - start))
        result.seconds = time.perf_counter() - start
        return result


def confirm(result: SearchResult, replays: Mapping[int, _Replay], budget: float) -> SearchResult:
    """``result`` with its choice decided: the search's fastest schedule and the baseline called
    interleaved (interleaved_medians, in about ``budget`` seconds), the winner kept only when
    its median is _MARGIN faster, else the baseline chosen. Both measurements are replaced by
    the medians of those calls (``replays``: what each measurement called, by its id). A
    baseline stopped over time, or called once and _HOPELESS times slower than the winner and
    still so in one more call (_still_hopeless), is not called again: the winner stands."""
    baseline, winner = result.baseline, result.best
    if winner is baseline or baseline.stopped:
        return result
    hopeless = _HOPELESS * winner.total
    slow = baseline.calls == 1 and baseline.total >= hopeless
    if slow and _still_hopeless(replays[id(baseline)], hopeless):
        return result
    first, second = replays[id(baseline)], replays[id(winner)]
    baseline_seconds, winner_seconds, rounds = interleaved_medians(first, second, budget)
    kept = winner_seconds * _MARGIN <= baseline_seconds
    confirmed = {
        id(baseline): _confirmed(baseline, first, baseline_seconds, rounds),
        id(winner): _confirmed(winner, second, winner_seconds, rounds),
    }
    result.measurements = [confirmed.get(id(m), m) for m in result.measurements]
    result.baseline = confirmed[id(baseline)]
    result.best = confirmed[id(winner if kept else baseline)]
    result.confirmation = Confirmation(baseline_seconds, winner_seconds, rounds, kept)
    logger.info(
        "coiter: autoschedule: %s %.3g ms vs the default's %.3g ms in %d interleaved rounds: %s",
        describe(winner.schedule) or "the default",
        winner_seconds * 1e3,
        baseline_seconds * 1e3,
        rounds,
        "kept" if kept else f"not {_MARGIN:g} times faster, the default is stored",
    )
    return result


def _still_hopeless(call: _Replay, seconds: float) -> bool:
    """Whether one more call of ``call`` takes ``seconds`` or more (stopped once its wall time
    passes twice that: on a busy machine wall time runs up to about twice the CPU time). The
    one call a slow baseline got may be a hiccup: SDDMM's default, whose second call writes a
    fresh 32 MB result while the first one is kept as the reference, took 60-85 ms in it and
    2 ms in later calls."""
    clock = call_clock()
    start = clock()
    try:
        result = call_within(call, 2 * seconds)
    except OverTime:
        return True
    took = clock() - start
    del result
    return took >= seconds


def _confirmed(m: Measurement, call: _Replay, total: float, rounds: int) -> Measurement:
    """``m`` timed anew: the median ``total`` of ``rounds`` interleaved calls of ``call``."""
    conversion = call.conversion_seconds(rounds)
    return replace(m, seconds=total - conversion, conversion_seconds=conversion, calls=rounds)


def _search(
    variants: list[Variant],
    pipelines: Sequence[PipelineCandidate],
    budget: float,  # (the share of the budget before confirm)
    runner: _Runner,
    rng: random.Random,
    start: float,
    bar: Progress,
) -> SearchResult:
    measurements: list[Measurement] = []

    def elapsed() -> float:
        return time.perf_counter() - start

    def record(m: Measurement) -> None:
        measurements.append(m)
        if bar.shown:
            bar.advance_to(round(elapsed(), 1))
            best = min((x.total for x in measurements if x.error is None), default=math.inf)
            bar.note(timed=len(measurements), best=f"{best * 1e3:.3g} ms")

    # The variants come in order of promise: the caller puts first the conversion that the
    # transpose rule picks, whose default is then the reference result and the time that
    # stops a hopeless default on the given formats (an inner product of seconds). The
    # first two defaults are timed whatever the budget, the others while it lasts.
    for k, variant in enumerate(variants):
        if k >= 2 and elapsed() >= budget:
            break
        record(runner.measure(variant, "", "default", _arm(variant, "default")))
    # The baseline is the default on the given formats (its time a lower bound when it was
    # stopped) or, when no loop order fits them (ct.evaluate then converts operands too),
    # the first conversion's default that compiles.
    given = next(m for m in measurements if not m.conversions)
    baseline = (
        given
        if given.error is None or given.stopped
        else next((m for m in measurements if m.error is None), None)
    )
    if baseline is None:
        raise CompileError(
            "autoschedule: the default schedule compiles neither on the given formats nor "
            f"on any conversion: {given.error}"
        )
    # The frontier's pipelines, while the budget lasts (schedule="auto"'s untuned choice
    # whatever the budget).
    given_variant = next(v for v in variants if not v.conversions)
    for candidate in pipelines:
        if candidate.untuned_choice or elapsed() < budget:
            record(runner.measure_pipeline(given_variant, candidate))
    arms = _arms(variants)
    size = _size(arms)
    per_schedule = elapsed() / max(1, len(measurements))
    exhaustive = size is not None and size * per_schedule <= budget - elapsed()
    posterior: dict[str, list[float]] = {name: [] for name in arms}
    for variant, schedule, origin, arm in _draws(arms, posterior, exhaustive, rng):
        if elapsed() + per_schedule > budget:
            break
        m = runner.measure(variant, schedule, origin, arm)
        record(m)
        if m.error is None:
            posterior[arm].append(math.log(m.total / baseline.total))
        else:
            posterior[arm].append(math.log(4.0))  # a failure teaches the arm little good
        per_schedule = elapsed() / len(measurements)
    timed = [m for m in measurements if m.error is None]
    best = min(timed, key=lambda m: m.total)
    summary = {arm: (len(logs), statistics.fmean(logs)) for arm, logs in posterior.items() if logs}
    return SearchResult(
        measurements,
        baseline,
        best,
        elapsed(),
        "exhaustive" if exhaustive else "thompson sampling",
        size,
        summary,
    )


_LOOP_ORDERS = "loop orders"
# The arm name of the frontier's pipelines (timed before the bandit's arms, not drawn by it).
_PIPELINES = "frontier pipelines"
# Spaces of at most this many partitions are expanded to decide whether to search them all.
_EXPANDED_PARTITIONS = 24
# An arm's schedules: drawn lazily ((variant, template) pairs are filled when first drawn).
_Points = list[tuple[Variant, Any]]


def _arm(variant: Variant, name: str) -> str:
    names = ", ".join(f"{n}→{f}" for n, f in variant.conversions.items())
    return f"[{names}] {name}" if names else name


def _arms(variants: list[Variant]) -> dict[str, _Points]:
    """Each variant's base loop orders (one arm per variant) and its partitions (an arm each,
    expanded into templates when first drawn), by arm."""
    arms: dict[str, _Points] = {}
    for variant in variants:
        bases = [b for b in variant.bases if b.schedule]
        if bases:
            arms.setdefault(_arm(variant, _LOOP_ORDERS), []).extend((variant, b) for b in bases)
        for index, (base, partition) in enumerate(variant.space.arms):
            name = _arm(variant, f"{base.schedule} | {partition}")
            arms.setdefault(name, []).append((variant, index))
    return arms


def _size(arms: dict[str, _Points]) -> int | None:
    """How many schedules the arms fill (None: more than _EXPANDED_PARTITIONS partitions, which
    are not expanded to count them)."""
    partitions = sum(isinstance(p, int) for points in arms.values() for _, p in points)
    if partitions > _EXPANDED_PARTITIONS:
        return None
    total = 0
    for points in arms.values():
        for variant, point in points:
            if isinstance(point, int):
                total += sum(variant.space.size(t) for t in variant.space.templates_of(point))
            else:
                total += 1
    return total


def _draws(
    arms: dict[str, _Points],
    posterior: Mapping[str, list[float]],
    exhaustive: bool,
    rng: random.Random,
) -> Iterator[tuple[Variant, str, str, str]]:
    """(variant, schedule, origin, arm) to time next: every arm in turn when exhaustive, else
    Thompson sampling over the arms that have schedules left."""
    # arm -> the filled schedules of its last drawn template not yet timed
    pending: dict[str, list[tuple[Variant, str, str]]] = {}
    remaining = {arm: list(points) for arm, points in arms.items()}
    for points in remaining.values():
        rng.shuffle(points)

    def next_schedule(arm: str) -> tuple[Variant, str, str] | None:
        while remaining[arm] or pending.get(arm):
            if pending.get(arm):
                return pending[arm].pop()
            variant, point = remaining[arm].pop()
            if isinstance(point, Candidate):
                return variant, point.schedule, point.origin
            if isinstance(point, int):  # a partition: its templates, in random order
                templates = list(variant.space.templates_of(point))
                rng.shuffle(templates)
                remaining[arm].extend((variant, t) for t in templates)
                continue
            filled = list(schedule_space.fill(variant.space, point))
            rng.shuffle(filled)
            pending[arm] = [(variant, text, "space") for text in filled]
        return None

    live = [arm for arm in arms if remaining[arm]]
    # The base loop orders first (the frontier's members: few, and each a whole asymptotic
    # choice), then the partitions of the space.
    for arm in [a for a in live if a.endswith(_LOOP_ORDERS)]:
        while (drawn := next_schedule(arm)) is not None:
            yield drawn[0], drawn[1], drawn[2], arm
        live.remove(arm)
    while live:
        arm = live[0] if exhaustive else min(live, key=lambda a: _sample(posterior[a], rng))
        drawn = next_schedule(arm)
        if drawn is None:
            live.remove(arm)
            continue
        if exhaustive and not (remaining[arm] or pending.get(arm)):
            live.remove(arm)
        yield drawn[0], drawn[1], drawn[2], arm


def _sample(logs: list[float], rng: random.Random) -> float:
    """A sample of an arm's mean log time (conjugate Gaussian posterior)."""
    precision = 1 / _PRIOR_VARIANCE + len(logs) / _NOISE_VARIANCE
    mean = (sum(logs) / _NOISE_VARIANCE) / precision
    return rng.gauss(mean, math.sqrt(1 / precision))
