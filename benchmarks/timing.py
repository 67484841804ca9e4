"""The one timing helper of the suite: warm-up, repeated calls, median and spread.

Several callables that compute the same thing are timed *interleaved* (one call of each in
turn, repeatedly), so that a change in the machine's load touches all of them alike; on a
shared machine that matters more than the number of repeats. Each call's result is freed
outside the clock.
"""

import gc
import statistics
import time
from dataclasses import asdict, dataclass


@dataclass
class Timing:
    """Seconds per call: the median of ``runs``, and their spread."""

    median: float
    minimum: float
    maximum: float
    iqr: float  # interquartile range: the spread that ignores single outliers
    runs: list

    @classmethod
    def of(cls, runs):
        runs = list(runs)
        quartiles = statistics.quantiles(runs, n=4) if len(runs) > 1 else [runs[0]] * 3
        return cls(statistics.median(runs), min(runs), max(runs), quartiles[2] - quartiles[0], runs)

    @property
    def relative_spread(self):
        return self.iqr / self.median if self.median > 0 else 0.0

    def as_dict(self):
        return asdict(self)


def time_call(fn):
    """(seconds, result) of one call of ``fn``."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def time_once(fn):
    """Seconds one call of ``fn`` takes; its result is freed outside the clock."""
    seconds, result = time_call(fn)
    del result
    return seconds


@dataclass
class RepeatPolicy:
    """How many timed calls a callable gets, from the time of its warm-up call: enough to
    fill ``budget_s``, at least ``min_repeats`` and at most ``max_repeats``; but a call so
    slow that ``min_repeats`` of them would pass ``cap_s`` gets only what fits in ``cap_s``
    (at least one), so that one slow peer does not stretch the whole run."""

    min_repeats: int
    max_repeats: int
    budget_s: float
    cap_s: float

    def repeats_for(self, seconds_per_call):
        if seconds_per_call <= 0:
            return self.max_repeats
        if seconds_per_call * self.min_repeats > self.cap_s:
            return max(1, int(self.cap_s / seconds_per_call))
        fit = int(self.budget_s / seconds_per_call)
        return max(self.min_repeats, min(self.max_repeats, fit))


def measure_interleaved(callables, policy, warmup_seconds, warmup_rounds=0):
    """Time each of ``callables`` (name -> zero-argument function), interleaved.

    ``warmup_seconds`` (name -> seconds of the warm-up call already made, e.g. while the
    results were checked) sets each callable's repeat count; ``warmup_rounds`` more untimed
    calls of each come first (after a change of thread count). Rounds go on until every
    callable has its count, so the calls stay interleaved. A callable that raises during
    timing stops being timed; its error is returned instead of a Timing.
    Returns name -> Timing or name -> the exception."""
    wanted = {name: warmup_rounds + policy.repeats_for(warmup_seconds[name]) for name in callables}
    runs = {name: [] for name in callables}
    errors = {}
    # As timeit does, the cyclic garbage collector is off while timing (results are freed
    # by reference counting as each call returns); one collection before, none inside.
    gc.collect()
    gc.disable()
    try:
        for round_ in range(max(wanted.values(), default=0)):
            for name, fn in callables.items():
                if name in errors or round_ >= wanted[name]:
                    continue
                try:
                    seconds = time_once(fn)
                    if round_ >= warmup_rounds:
                        runs[name].append(seconds)
                except Exception as error:  # a peer failing mid-run is recorded, not hidden
                    errors[name] = error
    finally:
        gc.enable()
    return {name: errors.get(name) or Timing.of(runs[name]) for name in callables}


def median_of(fn, repeats, warmup=1):
    """Timing of ``repeats`` calls of ``fn`` after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    return measure_interleaved(
        {"fn": fn}, RepeatPolicy(repeats, repeats, 0.0, float("inf")), {"fn": 1.0}
    )["fn"]
