"""ct.autoschedule, the tuning database and schedule="auto" (docs/autoscheduling.md).

Budgets are fractions of a second: the tests check what the search returns and remembers, not
how good it is (benchmarks/autoschedule.py measures that)."""

import json
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coiter as ct
from coiter.autosched import api, search, trimming
from coiter.autosched import space as schedule_space
from coiter.autosched.api import cheapest_member
from coiter.autosched.candidates import Problem, frontier_bases, loop_order_candidates
from coiter.autosched.database import bucket_of, operand_statistics
from coiter.autosched.pipeline import Pipeline, stages_of
from coiter.autosched.search import Measurement, OverTime, call_within, same_result, time_calls
from coiter.formats import as_format
from coiter.notation import accesses

SPMV = "y(i) = A(i,j) * x(j)"
ROOT = pathlib.Path(__file__).resolve().parents[1]


def spmv_operands(rows=300, cols=200, density=0.05, seed=0):
    A = sp.random(rows, cols, density=density, format="csr", random_state=seed)
    x = np.random.default_rng(seed).random(cols)
    return A, x


def test_autoschedule_returns_a_schedule_that_computes_the_statement(tuning_dir):
    A, x = spmv_operands()
    schedule, report = ct.autoschedule(SPMV, budget=0.4, A=A, x=x)
    assert isinstance(schedule, ct.Schedule)
    assert str(schedule) == report.schedule
    assert not report.from_database and report.timed
    assert report.default.schedule == "" and report.default in report.measurements
    # The fastest schedule timed, kept only when it beat the default by the margin in
    # interleaved calls (tests/test_autoschedule_confirm.py); else the default.
    assert report.chosen in report.timed
    assert report.chosen is report.default or (
        report.chosen.total * search._MARGIN <= report.default.total
    )
    assert report.speedup == pytest.approx(report.default.total / report.chosen.total)
    operands = {"A": A, "x": x}
    for name, fmt in report.conversions.items():
        operands[name] = ct.asarray(operands[name]).asformat(fmt)
    y = ct.evaluate(SPMV, schedule=schedule, **operands)
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12)
    assert report.tuning_seconds < 0.4 + 1.0  # the budget, and one schedule that ran past it


def test_autoschedule_builds_the_frontier_within_the_deadline(tuning_dir, monkeypatch, caplog):
    # ct.autoschedule bounds the asymptotic frontier as calls without a schedule do
    # (ct.config.frontier_seconds: order-4 MTTKRP's takes about 10 s unbounded). Cut by a
    # deadline, it still tunes a legal schedule that computes the statement.
    stmt = "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)"
    rng = np.random.default_rng(5)
    B = ct.random((20, 12, 10), density=0.1, format="sss", seed=5)
    C, D = rng.random((12, 6)), rng.random((10, 6))
    expected = np.einsum("ikl,kj,lj->ij", B.to_numpy(), C, D)
    monkeypatch.setattr(ct.config, "frontier_seconds", 0.0)
    with caplog.at_level(logging.INFO, logger="coiter"):
        schedule, report = ct.autoschedule(stmt, budget=0.3, B=B, C=C, D=D)
    assert "was cut at its deadline of 0 s" in caplog.text
    assert "cut at its deadline" in report.frontier
    operands = {"B": B, "C": C, "D": D}
    if isinstance(schedule, Pipeline):
        result = schedule(**operands)
    else:
        for name, fmt in report.conversions.items():
            operands[name] = ct.asarray(operands[name]).asformat(fmt)
        result = ct.evaluate(stmt, schedule=schedule, **operands)
    np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-12)
    # What it stored serves schedule="auto".
    auto = ct.evaluate(stmt, schedule="auto", B=B, C=C, D=D)
    np.testing.assert_allclose(auto.to_numpy(), expected, rtol=1e-12)


def test_autoschedule_within_the_deadline_searches_the_whole_frontier(tuning_dir, monkeypatch):
    # A frontier built within the deadline is the whole one: the same members as unbounded.
    A, x = spmv_operands()
    members = []
    real = api.frontier_bases

    def spy(problem, seconds=None):
        found = real(problem, seconds)
        members.append([b.member.index for b in found[0]])
        assert seconds == ct.config.frontier_seconds == 1.0
        return found

    monkeypatch.setattr(api, "frontier_bases", spy)
    _, report = ct.autoschedule(SPMV, budget=0.2, A=A, x=x)
    whole, _ = frontier_bases(Problem.of(SPMV, {"A": "csr", "x": "d", "y": "d"}))
    assert members == [[b.member.index for b in whole]] and "cut" not in report.frontier


def test_the_report_reads_as_text_html_and_a_plot(tuning_dir):
    A, x = spmv_operands()
    _, report = ct.autoschedule(SPMV, budget=0.3, A=A, x=x)
    text = str(report)
    assert SPMV in text and "default" in text and "chosen" in text
    assert "loop orders concordant" in text  # the space's counts
    html = report._repr_html_()
    assert html.startswith("<p>") and "<table>" in html
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = report.plot()
    assert len(ax.patches) == len(report.timed)


def test_a_second_call_is_a_database_hit_that_times_nothing(tuning_dir):
    A, x = spmv_operands()
    schedule, first = ct.autoschedule(SPMV, budget=0.3, A=A, x=x)
    before = ct.tuning_info()
    again, second = ct.autoschedule(SPMV, budget=0.3, A=A, x=x)
    assert second.from_database and second.measurements == []
    assert again == schedule and second.conversions == first.conversions
    after = ct.tuning_info()
    assert after["hits"] == before["hits"] + 1 and after["tunings"] == before["tunings"]
    assert after["entries"] == 1 and after["path"] == str(tuning_dir / "tuning.sqlite3")
    # retune times again
    _, third = ct.autoschedule(SPMV, budget=0.3, retune=True, A=A, x=x)
    assert not third.from_database and third.timed


def test_clear_tuning_forgets(tuning_dir):
    A, x = spmv_operands()
    ct.autoschedule(SPMV, budget=0.2, A=A, x=x)
    assert ct.tuning_info()["entries"] == 1
    ct.clear_tuning()
    assert ct.tuning_info()["entries"] == 0
    _, report = ct.autoschedule(SPMV, budget=0.2, A=A, x=x)
    assert not report.from_database


def test_similar_inputs_share_a_bucket_and_different_ones_do_not():
    A, x = spmv_operands(seed=0)
    B, y = spmv_operands(seed=1)  # same sizes and density, other entries
    C, z = spmv_operands(rows=3000, seed=0)
    bucket = bucket_of(operand_statistics({"A": ct.asarray(A), "x": ct.asarray(x)}))
    assert bucket == bucket_of(operand_statistics({"A": ct.asarray(B), "x": ct.asarray(y)}))
    assert bucket != bucket_of(operand_statistics({"A": ct.asarray(C), "x": ct.asarray(z)}))


def test_the_database_is_in_wal_mode_and_keeps_whole_rows(tuning_dir):
    import sqlite3

    from coiter.autosched.database import Entry, database

    entry = Entry("sig", "bucket", "split(i,i0,i1,16)", {"A": "ds:1,0"}, 1.0, 2.0, 0.5, {"A": {}})
    database.store(entry)
    assert database.lookup("sig", "bucket") == entry
    assert database.lookup("sig", "other") is None
    database.store(Entry("sig", "bucket", "", {}, 0.5, 2.0, 0.5, {"A": {}}))  # the last wins
    assert database.lookup("sig", "bucket").schedule == ""
    with sqlite3.connect(tuning_dir / "tuning.sqlite3") as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("SELECT COUNT(*) FROM tuned").fetchone()[0] == 1


class _LockedAtFirst:
    """A connection whose journal-mode switch finds the file locked ``times`` times (as when
    another process opens the new file at the same moment: SQLite answers at once, without
    waiting), and records each statement."""

    def __init__(self, times, error="database is locked"):
        self.times, self.error, self.statements = times, error, []

    def execute(self, statement):
        import sqlite3

        self.statements.append(statement)
        if len(self.statements) <= self.times:
            raise sqlite3.OperationalError(self.error)


def test_entering_wal_mode_waits_out_another_process_and_raises_other_errors():
    import sqlite3

    from coiter.autosched.database import _enter_wal_mode

    connection = _LockedAtFirst(3)
    _enter_wal_mode(connection)
    assert connection.statements == ["PRAGMA journal_mode = WAL"] * 4
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _enter_wal_mode(_LockedAtFirst(1, "disk I/O error"))


_TUNE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np, scipy.sparse as sp
    import coiter as ct
    seed = int(sys.argv[1])
    A = sp.random(300, 200, density=0.05, format="csr", random_state=seed)
    x = np.random.default_rng(seed).random(200)
    schedule, report = ct.autoschedule("y(i) = A(i,j) * x(j)", budget=float(sys.argv[2]),
                                       A=A, x=x)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", schedule="auto", A=A, x=x)
    assert np.allclose(y.to_numpy(), A @ x)
    print(json.dumps({"schedule": str(schedule), "hit": report.from_database,
                      "timed": len(report.measurements), **ct.tuning_info()}))
    """
)


def _tune_in(cache_dir, seed, budget):
    env = dict(os.environ, COITER_CACHE_DIR=str(cache_dir))
    return subprocess.Popen(
        [sys.executable, "-c", _TUNE_SCRIPT, str(seed), str(budget)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(process):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_two_processes_tune_at_once_and_a_third_tunes_nothing(tmp_path):
    # Two processes tune the same signature and bucket at the same time (both write: the last
    # write wins, whole); a third with similar inputs (other entries, same statistics bucket)
    # finds the tuning and times nothing.
    first, second = _tune_in(tmp_path, 0, 0.3), _tune_in(tmp_path, 1, 0.3)
    results = [_result(first), _result(second)]
    assert all(r["entries"] == 1 for r in results)
    third = _result(_tune_in(tmp_path, 2, 0.3))
    assert third["hit"] and third["timed"] == 0 and third["tunings"] == 0
    assert third["schedule"] in {r["schedule"] for r in results}


def test_evaluate_auto_uses_the_tuning(tuning_dir):
    A, x = spmv_operands()
    schedule, _ = ct.autoschedule(SPMV, budget=0.3, conversions=False, A=A, x=x)
    before = ct.tuning_info()
    y = ct.evaluate(SPMV, schedule="auto", A=A, x=x)
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12)
    after = ct.tuning_info()
    assert (after["rule_choices"], after["frontier_choices"]) == (
        before["rule_choices"],
        before["frontier_choices"],
    )
    # ct.compile has no operands: the latest tuning of the signature that converts nothing.
    kern = ct.compile(SPMV, formats={"A": "csr", "x": "dense", "y": "dense"}, schedule="auto")
    direct = ct.compile(SPMV, formats={"A": "csr", "x": "dense", "y": "dense"}, schedule=schedule)
    assert kern.concrete == direct.concrete


def test_compile_auto_without_a_tuning_is_the_default(tuning_dir):
    auto = ct.compile(SPMV, formats={"A": "csr"}, schedule="auto")
    assert auto.concrete == ct.compile(SPMV, formats={"A": "csr"}).concrete


def test_auto_picks_the_frontier_member_that_makes_the_inner_product_a_row_product(tuning_dir):
    # einsum("it,jt->ij", Y, Y) with CSR Y intersects two rows per result entry by default;
    # without a tuning, schedule="auto" takes the frontier member cheapest on Y's statistics:
    # Gustavson's row-by-row product on B converted to CSC.
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    before = ct.tuning_info()
    C = ct.evaluate("C(i,j) = A(i,t) * B(j,t)", schedule="auto", A=Y, B=Y)
    after = ct.tuning_info()
    assert after["frontier_choices"] == before["frontier_choices"] + 1
    assert after["rule_choices"] == before["rule_choices"]
    np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
    problem = Problem.of("C(i,j) = A(i,t) * B(j,t)", {"A": "csr", "B": "csr", "C": "csr"})
    bases, _ = frontier_bases(problem)
    picked = cheapest_member(problem, bases, {"A": ct.asarray(Y), "B": ct.asarray(Y)})
    assert picked.candidate is not None and picked.candidate.loop_order == ("i", "t", "j")
    assert list(picked.conversions) == ["B"] and list(picked.conversions["B"].mode_order) == [1, 0]


def test_auto_takes_the_default_when_the_cheapest_member_is_its_program(tuning_dir):
    # SpMV's cheapest member is reorder(i,j), the program the default schedule makes (which
    # also tags its outer loop parallel): schedule="auto" keeps the default. (No tuning: this
    # process remembers choices made with other tests' tunings of these operands.)
    ct.clear_tuning()
    A, x = spmv_operands()
    operands = {"A": ct.asarray(A), "x": ct.asarray(x)}
    problem = Problem.of(SPMV, {"A": "csr", "x": "dense", "y": "dense"})
    picked = cheapest_member(problem, frontier_bases(problem)[0], operands)
    assert picked.candidate.schedule == "reorder(i,j)" and not picked.conversions
    choice = ct.autosched.instant_choice.for_operands(
        problem.parsed, operands, problem.formats, problem.dtypes, None
    )
    assert choice == ("", {})


def test_auto_runs_a_frontier_member_of_two_kernels(tuning_dir):
    # SpGEMMH: every frontier member has the same cost; the one converting no operand is the
    # two-kernel program that multiplies C and D elementwise first (w = C∘D, then A = B·w).
    B, C, D = (sp.random(120, 120, density=0.05, format="csr", random_state=s) for s in range(3))
    stmt = "A(i,j) = B(i,k) * C(k,j) * D(k,j)"
    operands = {"B": B, "C": C, "D": D}
    before = ct.tuning_info()["frontier_choices"]
    for engine in ("c", "llvm"):
        A = ct.evaluate(stmt, schedule="auto", engine=engine, **operands)
        np.testing.assert_allclose(A.to_scipy().toarray(), (B @ C.multiply(D)).toarray())
        assert A.format == ct.asarray(B).format
    assert ct.tuning_info()["frontier_choices"] == before + 2
    problem = Problem.of(stmt, {n: "csr" for n in "ABCD"})
    bases, _ = frontier_bases(problem)
    picked = cheapest_member(problem, bases, {n: ct.asarray(t) for n, t in operands.items()})
    assert picked.candidate is None
    first, second = picked.member.stages
    assert first.statement == "w(k,j) = C(k,j) * D(k,j)" and "w(k,j)" in second.statement


def test_the_transpose_rule_decides_where_the_frontier_does_not_apply(tuning_dir, caplog):
    # A literal factor is outside the asymptotic stage (products of accesses only): the
    # fallback is logged, and the transpose rule converts the second operand to CSC.
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    stmt = "C(i,j) = 2 * A(i,t) * B(j,t)"
    before = ct.tuning_info()["rule_choices"]
    with caplog.at_level("INFO", logger="coiter"):
        C = ct.evaluate(stmt, schedule="auto", A=Y, B=Y)
    assert ct.tuning_info()["rule_choices"] == before + 1
    assert "using the transpose rule instead of the frontier" in caplog.text
    np.testing.assert_allclose(C.to_scipy().toarray(), 2 * (Y @ Y.T).toarray(), rtol=1e-12)
    problem = Problem.of(stmt, {"A": "csr", "B": "csr", "C": "csr"})
    from coiter.autosched.api import transpose_rule

    chosen = transpose_rule(problem, {"A": ct.asarray(Y), "B": ct.asarray(Y)})
    assert list(chosen) == ["B"] and list(chosen["B"].mode_order) == [1, 0]
    # Few, nearly full columns: the rows' products are as many as the intersections' steps
    # (about 50·50·4 each way), so nothing is converted.
    full = sp.random(50, 4, density=0.9, format="csr", random_state=3)
    assert transpose_rule(problem, {"A": ct.asarray(full), "B": ct.asarray(full)}) == {}


def test_einsum_takes_the_schedule_too(tuning_dir):
    # The motivating case: einsum("it,jt->ij", Y, Y) with a CSR Y (an inner product by
    # default); schedule="auto" takes the frontier's row-by-row product.
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    before = ct.tuning_info()["frontier_choices"]
    C = ct.einsum("it,jt->ij", Y, Y, schedule="auto")
    assert ct.tuning_info()["frontier_choices"] == before + 1
    np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
    D = ct.einsum("it,jt->ij", Y, Y, schedule="reorder(i,j,t)")
    np.testing.assert_allclose(D.to_numpy(), (Y @ Y.T).toarray(), rtol=1e-12)


def test_autoschedule_searches_the_frontier_members_of_one_schedule(tuning_dir):
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    # (The base loop orders are timed right after the defaults: 1.5 s is ample for them even
    # on a busy machine, where each compile takes a tenth of a second.)
    _, report = ct.autoschedule("C(i,j) = A(i,t) * B(j,t)", budget=1.5, A=Y, B=Y)
    assert "#1 searched (B→ds:1,0)" in report.frontier and "B→ds:1,0" in report.space
    member = next(c for c in report.candidates if c.origin == "frontier #1")
    timed = [m for m in report.measurements if m.schedule == member.schedule and m.conversions]
    assert timed and timed[0].conversions == {"B": "ds:1,0"} and timed[0].error is None


def test_conversions_are_searched_and_timed_with_their_cost(tuning_dir, monkeypatch):
    # Every timed call converts the operands as given, as schedule="auto" does on each call.
    conversions = []
    real_converted = search.converted

    def counted(operands, formats):
        conversions.append(dict(formats))
        return real_converted(operands, formats)

    monkeypatch.setattr(search, "converted", counted)
    Y = sp.random(400, 100, density=0.02, format="csr", random_state=3)
    _, report = ct.autoschedule("C(i,j) = A(i,t) * B(j,t)", budget=0.5, A=Y, B=Y)
    converted = [m for m in report.timed if m.conversions]
    assert converted and all(m.conversion_seconds > 0 for m in converted)
    assert all(m.total == m.seconds + m.conversion_seconds for m in converted)
    assert len(conversions) >= sum(m.calls for m in converted)  # (and the warm-up calls)
    C = ct.evaluate("C(i,j) = A(i,t) * B(j,t)", schedule="auto", A=Y, B=Y)
    np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)


def test_bad_arguments_raise_clear_errors(tuning_dir):
    A, x = spmv_operands()
    with pytest.raises(ValueError, match="budget"):
        ct.autoschedule(SPMV, budget=0, A=A, x=x)
    with pytest.raises(TypeError, match="no tensor given"):
        ct.autoschedule(SPMV, budget=0.1, A=A)
    with pytest.raises(TypeError, match="no tensor named"):
        ct.autoschedule(SPMV, budget=0.1, A=A, x=x, z=x)
    with pytest.raises(ct.ShapeError):
        ct.autoschedule(SPMV, budget=0.1, A=A, x=np.ones(7))


def test_progress_bar_when_asked(tuning_dir, capsys):
    pytest.importorskip("tqdm")
    A, x = spmv_operands()
    ct.autoschedule(SPMV, budget=0.3, progress=True, A=A, x=x)
    assert "autoschedule" in capsys.readouterr().err


def test_time_calls_takes_the_median_of_at_least_three_calls():
    calls = []
    seconds, count = time_calls(lambda: calls.append(1), 0.0)
    assert count == 3 and len(calls) == 4 and seconds >= 0  # a warm-up, then three


@pytest.mark.parametrize("shape", [(30, 20), (3000, 2000)])  # dense, then sparse comparison
def test_same_result_compares_values_and_structure(shape):
    m = sp.random(*shape, density=0.01, format="csr", random_state=0)
    a = ct.asarray(m)
    assert same_result(a, ct.asarray(m.copy()))  # same levels
    assert same_result(a, a.asformat("csc"))  # other levels, same entries
    assert not same_result(a, ct.asarray(m * 2))
    assert not same_result(a, ct.asarray(m * 2).asformat("csc"))
    other = m.copy()
    other.data[-1] += 1e-3
    assert not same_result(a, ct.asarray(other))
    assert not same_result(a, ct.asarray(other).asformat("csc"))


def test_a_measurement_total_includes_its_conversion():
    m = Measurement("", {"A": "ds:1,0"}, "default", "default", 1.0, conversion_seconds=0.5)
    assert m.total == 1.5 and m.as_dict()["conversions"] == {"A": "ds:1,0"}


# -- every searched candidate computes what NumPy does ---------------------------------------

STATEMENTS = [
    ("y(i) = A(i,j) * x(j)", "ij,j->i"),
    ("y(j) = A(i,j) * x(i)", "ij,i->j"),
    ("C(i,k) = A(i,j) * B(j,k)", "ij,jk->ik"),
    ("C(i,j) = A(i,t) * B(j,t)", "it,jt->ij"),
    ("C(i,j) = A(i,j) * B(i,j)", "ij,ij->ij"),
    ("y(i) = B(i,j,k) * c(k)", None),
]


def _operand(draw, order, shape, seed):
    density = draw(st.sampled_from([0.1, 0.3, 1.0]))
    rng = np.random.default_rng(seed)
    dense = rng.random(shape) * (rng.random(shape) < density)
    formats = {1: ["dense", "s"], 2: ["dense", "csr", "csc", "dcsr", "coo"], 3: ["dense", "csf"]}
    return ct.asarray(dense, format=draw(st.sampled_from(formats[order]))), dense


@st.composite
def problems(draw):
    stmt, _ = draw(st.sampled_from(STATEMENTS))
    sizes = {v: draw(st.integers(1, 9)) for v in "ijkt"}
    problem = Problem.of(stmt, {})
    operands, dense = {}, {}
    for k, access in enumerate(accesses(problem.parsed[0].rhs)):
        shape = tuple(sizes[v.name] for v in access.indices)
        operands[access.tensor.name], dense[access.tensor.name] = _operand(
            draw, len(shape), shape, draw(st.integers(0, 2**16)) + k
        )
    return stmt, operands, dense


def _expected(stmt, dense):
    problem = Problem.of(stmt, {})
    assignment = problem.parsed[0]
    terms = accesses(assignment.rhs)
    spec = ",".join("".join(v.name for v in a.indices) for a in terms)
    spec += "->" + "".join(v.name for v in assignment.lhs.indices)
    return np.einsum(spec, *[dense[a.tensor.name] for a in terms])


@pytest.mark.parametrize("engine", ["llvm", "c"])
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=problems(), seed=st.integers(0, 1000))
def test_every_searched_candidate_computes_what_numpy_does(engine, case, seed, tuning_dir):
    if engine == "llvm" and not ct._core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    stmt, operands, dense = case
    expected = _expected(stmt, dense)
    _, report = ct.autoschedule(
        stmt, budget=0.25, engine=engine, seed=seed, retune=True, **operands
    )
    assert not [m for m in report.measurements if m.error and "changed the result" in m.error]
    # Besides what the search timed, a few schedules drawn from the space directly.
    problem = Problem.of(stmt, {n: t.format for n, t in operands.items()})
    built = schedule_space.build(
        problem,
        loop_order_candidates(problem),
        trimming.PARTITION_PASSES,
        trimming.MAPPING_PASSES,
        trimming.concordant_loop_orders,
        threads=2,
    )
    rng = np.random.default_rng(seed)
    drawn = []
    for index in rng.permutation(len(built.templates))[:20]:
        drawn += list(schedule_space.fill(built, built.templates[index]))[:1]
        if len(drawn) == 2:
            break
    # (schedule, conversions, result format): the search's in the result format it used
    # (inferred on the operands as given, not on converted ones), the space's drawn for a
    # dense result (Problem.of's default).
    cases = [(m.schedule, m.conversions, report.result_format) for m in report.timed]
    cases += [(s, {}, "dense") for s in drawn]
    for schedule, conversions, out_format in cases:
        given_operands = {
            n: t.asformat(conversions[n]) if n in conversions else t for n, t in operands.items()
        }
        stages = stages_of(schedule)
        if stages is not None:  # a frontier member of two kernels, run as the search ran it
            fmt = as_format(out_format, len(problem.parsed[0].lhs.indices))
            result = Pipeline(stages, fmt, np.float64, {}, engine)(**given_operands)
        else:
            result = ct.evaluate(
                stmt, schedule=schedule, engine=engine, out_format=out_format, **given_operands
            )
        np.testing.assert_allclose(
            result.to_numpy(),
            expected,
            rtol=1e-10,
            atol=1e-12,
            err_msg=f"{schedule} {conversions}",
        )


def test_call_within_stops_a_long_kernel_and_lets_a_short_one_finish():
    n = 3000  # 27 G multiply-adds: no machine finishes it within the 0.2 s limit
    rng = np.random.default_rng(0)
    A, B = rng.random((n, n)), rng.random((n, n))
    kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "dd", "B": "dd", "C": "dd"})
    start = time.perf_counter()
    with pytest.raises(OverTime):
        call_within(lambda: kern(A=A, B=B), 0.2)
    assert time.perf_counter() - start < 1.5  # a plain call takes seconds
    # A call that ends first returns its result, and no interrupt is left to go off later.
    small = call_within(lambda: kern(A=np.eye(2), B=np.ones((2, 2))).to_numpy(), 5.0)
    np.testing.assert_array_equal(small, np.ones((2, 2)))
    for limit in (0.001, 0.001, None, 5.0):
        try:
            assert call_within(lambda: 7, limit) == 7
        except OverTime:
            assert limit == 0.001  # the limit may pass before the call starts
        time.sleep(0.05)  # a stray KeyboardInterrupt would be raised here


def test_an_interrupt_owed_as_the_timer_stops_is_still_over_time(monkeypatch):
    # The timer's SIGINT may be answered as call_within's finally starts stopping the timer,
    # before _stop_timer's own try: it must still end as OverTime, not KeyboardInterrupt.
    from coiter.autosched import search

    stop = search._stop_timer
    calls = []

    def interrupted_once(fired, timer):
        calls.append(fired.is_set())
        if len(calls) == 1:
            raise KeyboardInterrupt  # the handler, run at _stop_timer's first line
        stop(fired, timer)

    monkeypatch.setattr(search, "_stop_timer", interrupted_once)
    try:
        with pytest.raises(OverTime):
            call_within(lambda: time.sleep(5), 0.05)
    except KeyboardInterrupt:  # (escaping, it would stop the whole test run)
        pytest.fail("the timer's interrupt escaped call_within as KeyboardInterrupt")
    assert calls == [True, True]
