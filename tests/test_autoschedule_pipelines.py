"""Frontier members of two kernels in the empirical search and in schedule="auto"
(docs/autoscheduling.md: ct.autoschedule times them, a tuning may store one, and ct.compile
picks among the frontier's members of one kernel on nominal statistics)."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter.autosched import api
from coiter.autosched.api import (
    NOMINAL_EXTENT,
    NOMINAL_FIBER,
    _estimate,
    _ranked,
    instant_member,
    nominal_statistics,
)
from coiter.autosched.candidates import Problem, default_program, frontier_bases
from coiter.autosched.database import Entry, bucket_of, database, operand_statistics, signature
from coiter.autosched.pipeline import KernelStage, Pipeline, describe, pipeline_text, stages_of
from coiter.autosched.search import PipelineCandidate

SPGEMMH = "A(i,j) = B(i,k) * C(k,j) * D(k,j)"
# SpGEMMH's frontier member that multiplies C and D elementwise first (SciPy's B @ C.multiply(D)).
HADAMARD_FIRST = (
    KernelStage("w(k,j) = C(k,j) * D(k,j)", {"C": "ds", "D": "ds", "w": "ds"}, "reorder(k,j)", "w"),
    KernelStage(
        "A(i,j) = B(i,k) * w(k,j)", {"A": "ds", "B": "ds", "w": "ds"}, "reorder(i,k,j)", "A"
    ),
)


def spgemmh_operands(n=120, seed=0):
    return {
        name: sp.random(n, n, density=0.05, format="csr", random_state=seed + k)
        for k, name in enumerate("BCD")
    }


def expected_spgemmh(operands):
    return (operands["B"] @ operands["C"].multiply(operands["D"])).toarray()


def test_a_pipeline_text_reads_back_as_its_kernels():
    text = pipeline_text(HADAMARD_FIRST)
    assert stages_of(text) == list(HADAMARD_FIRST)
    assert stages_of("reorder(i,k,j)") is None and stages_of("") is None
    assert describe("reorder(i,k,j)") == "reorder(i,k,j)"
    assert describe(text) == (
        "w(k,j) = C(k,j) * D(k,j) [C:ds D:ds w:ds] reorder(k,j) ; "
        "A(i,j) = B(i,k) * w(k,j) [A:ds B:ds w:ds] reorder(i,k,j)"
    )
    with pytest.raises(ct.ScheduleError):
        ct.Schedule.parse(text)  # never mistaken for a schedule
    with pytest.raises(ValueError, match="not the text of a pipeline"):
        stages_of("pipeline:[1, 2")


def test_autoschedule_times_the_frontier_pipelines_and_checks_their_results(tuning_dir):
    operands = spgemmh_operands()
    program, report = ct.autoschedule(SPGEMMH, budget=1.0, **operands)
    pipelines = [m for m in report.measurements if stages_of(m.schedule) is not None]
    # The cost estimate's pick (a pipeline for SpGEMMH) is timed whatever the budget.
    assert pipelines and pipelines[0].origin.startswith("frontier #")
    assert all(m.error is None and m.conversions == {} for m in pipelines)
    assert "as a pipeline (2 kernels)" in report.frontier
    # Every timed pipeline computes the statement.
    for m in pipelines:
        run = Pipeline(
            stages_of(m.schedule), ct.asarray(operands["B"]).format, np.float64, {}, None
        )
        np.testing.assert_allclose(run(**operands).to_numpy(), expected_spgemmh(operands))
    # What autoschedule returns runs as the chosen program.
    if stages_of(report.schedule) is not None:
        assert isinstance(program, Pipeline)
        result = program(**operands)
    else:
        assert isinstance(program, ct.Schedule)
        result = ct.evaluate(SPGEMMH, schedule=program, **operands)
    np.testing.assert_allclose(result.to_numpy(), expected_spgemmh(operands))


def _store_pipeline_tuning(operands):
    """A tuning of SpGEMMH on these operands that chose HADAMARD_FIRST."""
    tensors = {n: ct.asarray(t) for n, t in operands.items()}
    problem = Problem.of(SPGEMMH, {n: "csr" for n in "ABCD"})
    statistics = operand_statistics(tensors)
    database.store(
        Entry(
            signature(problem, ct.compiler.default_engine(), ct._core.get_num_threads()),
            bucket_of(statistics),
            pipeline_text(HADAMARD_FIRST),
            {},
            1e-3,
            2e-3,
            0.5,
            statistics,
        )
    )


def test_a_stored_pipeline_is_what_auto_and_a_database_hit_run(tuning_dir):
    operands = spgemmh_operands()
    _store_pipeline_tuning(operands)
    before = ct.tuning_info()
    result = ct.evaluate(SPGEMMH, schedule="auto", **operands)
    after = ct.tuning_info()
    np.testing.assert_allclose(result.to_numpy(), expected_spgemmh(operands))
    assert after["frontier_choices"] == before["frontier_choices"]  # the tuning, not the frontier
    program, report = ct.autoschedule(SPGEMMH, budget=0.5, **operands)
    assert report.from_database and isinstance(program, Pipeline)
    assert [s.statement for s in program.stages] == [s.statement for s in HADAMARD_FIRST]
    np.testing.assert_allclose(program(**operands).to_numpy(), expected_spgemmh(operands))
    assert "w(k,j) = C(k,j) * D(k,j) [C:ds D:ds w:ds]" in str(report)


def test_compile_auto_never_takes_a_stored_pipeline(tuning_dir):
    operands = spgemmh_operands()
    _store_pipeline_tuning(operands)
    formats = {n: "csr" for n in "ABCD"}
    kernel = ct.compile(SPGEMMH, formats=formats, schedule="auto")
    result = kernel(**{n: ct.asarray(t) for n, t in operands.items()})
    np.testing.assert_allclose(result.to_numpy(), expected_spgemmh(operands))


def _with_extra_pipeline(monkeypatch, stages):
    """autoschedule's pipelines, with ``stages`` first (timed whatever the budget)."""
    found = api._pipeline_candidates

    def candidates(*args):
        return [PipelineCandidate("test", tuple(stages), untuned_choice=True)] + found(*args)

    monkeypatch.setattr(api, "_pipeline_candidates", candidates)


def test_an_illegal_pipeline_is_not_timed(tuning_dir, monkeypatch):
    # The second kernel reads w in CSR with j outside k: a traversal against its mode order.
    second = HADAMARD_FIRST[1]
    bad = (HADAMARD_FIRST[0], KernelStage(second.statement, second.formats, "reorder(i,j,k)", "A"))
    _with_extra_pipeline(monkeypatch, bad)
    operands = spgemmh_operands()
    _, report = ct.autoschedule(SPGEMMH, budget=0.3, **operands)
    m = next(m for m in report.measurements if m.origin == "test")
    assert m.error is not None and m.error.startswith("ScheduleError")
    assert report.chosen is not m


def test_a_pipeline_that_changes_the_result_is_dropped(tuning_dir, monkeypatch):
    wrong = (
        KernelStage("w(k,j) = C(k,j) * C(k,j)", {"C": "ds", "w": "ds"}, "reorder(k,j)", "w"),
        HADAMARD_FIRST[1],
    )
    _with_extra_pipeline(monkeypatch, wrong)
    operands = spgemmh_operands()
    _, report = ct.autoschedule(SPGEMMH, budget=0.3, **operands)
    m = next(m for m in report.measurements if m.origin == "test")
    assert m.error is not None and "changed the result" in m.error
    assert report.chosen is not m


def test_conversions_false_times_only_pipelines_that_convert_no_operand(tuning_dir):
    operands = spgemmh_operands()
    _, report = ct.autoschedule(SPGEMMH, budget=1.0, conversions=False, **operands)
    for m in report.measurements:
        stages = stages_of(m.schedule)
        if stages is None:
            continue
        for stage in stages:
            for name, fmt in stage.formats.items():
                if name in operands:
                    assert ct.asarray(operands[name]).format == ct.formats.as_format(fmt, 2)


def test_nominal_statistics():
    problem = Problem.of("y(i) = B(i,j,k) * c(k) * D(i,j)", {"B": "csf", "D": "csr"})
    extents, shapes, nonzeros = nominal_statistics(problem)
    n = NOMINAL_EXTENT
    assert extents == {"i": n, "j": n, "k": n}
    assert shapes == {"B": (n, n, n), "c": (n,), "D": (n, n)}
    assert nonzeros == {"B": NOMINAL_FIBER * n * n, "c": n, "D": NOMINAL_FIBER * n}


def test_compile_auto_keeps_the_default_when_the_member_saves_little(tuning_dir):
    # A(i,j) = B(i,k) * C(k,j) with B and A dense, C CSR: the default loops i,k,j visit every
    # (i,k) pair; the frontier's k,j,i visits C's nonzeros only, 1.125x fewer tasks on the
    # nominal inputs, but walks B and A by columns: 2.3-7x slower measured (2000x2000, 8 and
    # 64 nonzeros a row, one thread). schedule="auto" leaves the default only for a member
    # estimated to do _DEFAULT_MARGIN times less work.
    stmt, formats = "A(i,j) = B(i,k) * C(k,j)", {"C": "csr"}
    problem = Problem.of(stmt, formats)
    bases, _ = frontier_bases(problem)
    kernels = [b for b in bases if b.candidate is not None and not b.conversions]
    statistics = nominal_statistics(problem)
    cheapest = _ranked(problem, kernels, *statistics)[0]
    assert cheapest.candidate.schedule == "reorder(k,j,i)"
    default = default_program(problem, bases)
    assert default.candidate.schedule == "reorder(i,k,j)"
    assert (
        _estimate(problem, default, *statistics)[0] > _estimate(problem, cheapest, *statistics)[0]
    )
    assert instant_member(problem, kernels, default, *statistics) is default
    before = ct.tuning_info()["frontier_choices"]
    auto = ct.compile(stmt, formats=formats, schedule="auto")
    assert ct.tuning_info()["frontier_choices"] == before + 1
    assert auto.concrete == ct.compile(stmt, formats=formats, schedule="default").concrete
    rng = np.random.default_rng(0)
    B = rng.random((30, 40))
    C = sp.random(40, 20, density=0.1, format="csr", random_state=1)
    np.testing.assert_allclose(auto(B=B, C=C).to_numpy(), B @ C.toarray())
