"""The tuner's rule: a stored tuning is never slower than the default schedule on the inputs it
was tuned on (docs/autoscheduling.md, "Search", step 5). The search's winner is called
interleaved with the baseline and kept only when it is search._MARGIN faster; what every call
times is what schedule="auto" replays (the conversions on every call); and schedule="auto" later
runs exactly the stored winner."""

import importlib
import time

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter.autosched import search
from coiter.autosched.api import _prepare
from coiter.autosched.database import bucket_of, database, operand_statistics, signature
from coiter.autosched.search import Measurement, SearchResult, confirm, interleaved_medians

# (coiter.evaluate the module: the package's attribute of that name is the function)
evaluate_module = importlib.import_module("coiter.evaluate")
SPMV = "y(i) = A(i,j) * x(j)"
INNER = "C(i,j) = A(i,t) * B(j,t)"


class FakeClock:
    """A clock that only the fake calls advance."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_interleaving_gives_neither_call_the_warm_place():
    # Two calls of equal cost, where whichever runs second in a round finds a warm cache (20%
    # faster): timed in one fixed order, the second would look 25% faster.
    clock = FakeClock()
    calls = []

    def call():
        second_in_round = len(calls) % 2 == 1
        clock.now += 0.8 if second_in_round else 1.0
        calls.append(second_in_round)

    first, second, rounds = interleaved_medians(call, call, budget=0.0, clock=clock)
    assert rounds == search._CONFIRM_ROUNDS[0] and rounds % 2 == 0
    assert len(calls) == 2 * rounds
    assert first == pytest.approx(second) == pytest.approx(0.9)


def test_interleaving_runs_while_the_budget_lasts_within_bounds():
    clock = FakeClock()

    def tick():
        clock.now += 0.01

    least, most = search._CONFIRM_ROUNDS
    assert interleaved_medians(tick, tick, budget=0.0, clock=clock)[2] == least
    assert interleaved_medians(tick, tick, budget=0.5, clock=clock)[2] == most
    rounds = interleaved_medians(tick, tick, budget=0.17, clock=clock)[2]
    assert least < rounds < most and rounds % 2 == 0


class Counted:
    """A replay stand-in that counts its calls (confirm reads its conversion_seconds)."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1

    def conversion_seconds(self, calls):
        return 0.0


def _result(default_seconds, winner_seconds, default_calls=10):
    default = Measurement("", {}, "default", "default", default_seconds, calls=default_calls)
    winner = Measurement("reorder(i,j)", {}, "loop order", "loop orders", winner_seconds, calls=10)
    other = Measurement("reorder(j,i)", {}, "loop order", "loop orders", 2 * default_seconds)
    result = SearchResult([default, winner, other], default, winner, 1.0, "exhaustive", 3)
    return result, {id(default): Counted(), id(winner): Counted()}


@pytest.mark.parametrize(
    ("default", "winner", "kept"),
    [(1.0, 0.90, True), (1.0, 1 / 1.05, True), (1.0, 0.97, False), (1.0, 1.2, False)],
)
def test_the_winner_is_kept_only_when_interleaved_calls_show_it_5_percent_faster(
    monkeypatch, default, winner, kept
):
    # The search saw the winner 3 times faster; the interleaved calls decide.
    result, replays = _result(3.0, 1.0)
    searched_winner, searched_default = result.best, result.baseline
    monkeypatch.setattr(search, "interleaved_medians", lambda a, b, budget: (default, winner, 6))
    confirmed = confirm(result, replays, budget=0.1)
    assert confirmed.confirmation == search.Confirmation(default, winner, 6, kept)
    assert confirmed.baseline.total == default and confirmed.baseline.schedule == ""
    chosen = searched_winner if kept else searched_default
    assert confirmed.best.schedule == chosen.schedule
    assert confirmed.best.total == (winner if kept else default)
    # The measurements list holds the interleaved times in place of the search's.
    assert confirmed.best in confirmed.measurements and confirmed.baseline in confirmed.measurements
    assert searched_winner not in confirmed.measurements


def test_both_replays_are_called_in_the_interleaved_rounds():
    result, replays = _result(3.0, 1.0)
    default_replay, winner_replay = replays[id(result.baseline)], replays[id(result.best)]
    confirmed = confirm(result, replays, budget=0.0)
    rounds = confirmed.confirmation.rounds
    assert default_replay.calls == winner_replay.calls == rounds == search._CONFIRM_ROUNDS[0]
    assert confirmed.best.calls == confirmed.baseline.calls == rounds


class Spinning(Counted):
    """A replay whose calls keep the CPU busy for ``seconds``."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds

    def __call__(self):
        super().__call__()
        end = time.thread_time() + self.seconds
        while time.thread_time() < end:
            pass


def test_a_default_called_once_is_called_once_more_before_it_is_judged_hopeless(monkeypatch):
    # The search called the default once (too slow to repeat), 4 times slower than the winner.
    result, replays = _result(0.2, 0.05, default_calls=1)
    replays[id(result.baseline)] = Spinning(0.25)  # and so it is in one more call
    monkeypatch.setattr(search, "interleaved_medians", pytest.fail)
    assert confirm(result, replays, budget=1.0).best is result.best
    assert replays[id(result.baseline)].calls == 1
    # Its one call was a hiccup: the next takes as long as the winner's, and the interleaved
    # calls decide (here for the default).
    result, replays = _result(0.2, 0.05, default_calls=1)
    replays[id(result.baseline)] = Spinning(0.001)
    monkeypatch.setattr(search, "interleaved_medians", lambda a, b, budget: (0.05, 0.05, 6))
    confirmed = confirm(result, replays, budget=1.0)
    assert confirmed.best.schedule == "" and not confirmed.confirmation.kept


def test_a_stopped_default_is_not_called_again(monkeypatch):
    monkeypatch.setattr(search, "interleaved_medians", pytest.fail)
    stopped, replays = _result(4.0, 1.0)
    stopped.baseline.error = "stopped after 4 s (4 times the best so far)"
    assert confirm(stopped, replays, budget=1.0).best is stopped.best
    # The default won the search: nothing to confirm.
    result, replays = _result(1.0, 1.0)
    result.best = result.baseline
    assert confirm(result, replays, budget=1.0).confirmation is None


def _stored(stmt, **operands):
    problem, tensors = _prepare(stmt, None, operands)
    key = signature(problem, ct.compiler.default_engine(), ct.get_num_threads())
    return database.lookup(key, bucket_of(operand_statistics(tensors)))


def test_a_candidate_slower_than_the_default_is_not_stored_though_the_search_timed_it_fast(
    tuning_dir, monkeypatch
):
    # The search's times lie: A converted to CSC (a conversion on every call, then a kernel
    # scattering into y) is reported 1000 times faster than anything. The interleaved calls
    # of what schedule="auto" would replay show it slower, and the default is stored.
    real_timed = search._Runner._timed

    def lying(self, m, call, total, calls):
        m = real_timed(self, m, call, total, calls)
        if m.conversions:
            m.seconds, m.conversion_seconds = 1e-9, 0.0
        return m

    monkeypatch.setattr(search._Runner, "_timed", lying)
    A = sp.random(3000, 3000, density=0.002, format="csr", random_state=0)
    x = np.random.default_rng(0).random(3000)
    _, report = ct.autoschedule(SPMV, budget=0.5, A=A, x=x)
    lied = [m for m in report.measurements if m.conversions and m.error is None]
    assert lied, "the CSC variant was timed"
    assert report.schedule == "" and report.conversions == {}
    assert report.chosen is report.default
    stored = _stored(SPMV, A=A, x=x)
    assert (stored.schedule, stored.conversions) == ("", {})
    assert stored.seconds == stored.default_seconds == report.default.total
    # The winner the search believed in is listed with its interleaved time: no faster.
    (believed,) = [m for m in lied if m.total > 1e-6]
    assert believed.calls == report.default.calls >= search._CONFIRM_ROUNDS[0]
    assert believed.total * search._MARGIN > report.default.total


def _spy_on_compile(monkeypatch, module):
    """The (formats, schedule text, concrete program) of each kernel ``module`` compiles."""
    compiled = []
    real = module.compile_kernel

    def spied(*args, **kwargs):
        kernel = real(*args, **kwargs)
        compiled.append((dict(kwargs["formats"]), kwargs["schedule"], kernel.concrete))
        return kernel

    monkeypatch.setattr(module, "compile_kernel", spied)
    return compiled


def test_auto_runs_exactly_the_stored_winner(tuning_dir, monkeypatch):
    # The search is told that B converted to CSC, default schedule, wins (by 2x in the
    # interleaved calls); schedule="auto" must then compile that schedule on those formats
    # and convert B on the call, the same program the search timed.
    real_timed = search._Runner._timed

    def favour_csc(self, m, call, total, calls):
        m = real_timed(self, m, call, total, calls)
        if m.conversions != {"B": "ds:1,0"} or m.schedule:
            m.seconds += 1.0
        return m

    monkeypatch.setattr(search._Runner, "_timed", favour_csc)
    monkeypatch.setattr(search, "interleaved_medians", lambda a, b, budget: (2.0, 1.0, 6))
    searched = _spy_on_compile(monkeypatch, search)
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    _, report = ct.autoschedule(INNER, budget=0.3, A=Y, B=Y)
    assert (report.schedule, report.conversions) == ("", {"B": "ds:1,0"})
    stored = _stored(INNER, A=Y, B=Y)
    assert (stored.schedule, stored.conversions) == ("", {"B": "ds:1,0"})
    timed_program = next(
        concrete
        for formats, schedule, concrete in searched
        if schedule == "" and str(formats["B"]) == "ds:1,0"
    )

    replayed = _spy_on_compile(monkeypatch, evaluate_module)
    given = []
    real_converted = evaluate_module.converted

    def spied_converted(operands, conversions):
        given.append({n: str(f) for n, f in conversions.items()})
        return real_converted(operands, conversions)

    monkeypatch.setattr(evaluate_module, "converted", spied_converted)
    for _ in range(2):
        given.clear()
        C = ct.evaluate(INNER, schedule="auto", A=Y, B=Y)
        np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
    ((formats, schedule, concrete),) = replayed  # compiled once, on the first call
    assert schedule == "" and str(formats["B"]) == "ds:1,0" and str(formats["A"]) == "ds"
    assert concrete == timed_program
    assert given == [{"B": "ds:1,0"}]  # converted on each call, as every timed call did


@pytest.mark.parametrize(("threads", "counts_waiting"), [(1, False), (2, True)])
def test_one_thread_is_timed_by_its_cpu_time_several_by_the_wall_clock(threads, counts_waiting):
    # On one thread, time the core spends elsewhere (a busy machine's other processes; here a
    # sleep) is not the schedule's; with several threads the wall clock is what they take.
    before = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        seconds, _ = search.time_calls(lambda: time.sleep(0.01), 0.0)
    finally:
        ct.set_num_threads(before)
    assert (seconds >= 0.01) == counts_waiting
