"""Property tests for the compiler: random well-formed index expressions (sums and differences of
products of 1-4 accesses over 2-4 index variables, optional literals, optional explicit reductions,
a random subset of the indices as the result), random operand formats, shapes (zero-size and unit
extents included) and densities. ``ct.evaluate`` on both engines must equal NumPy on the dense
arrays (docs/reference.md, "Index notation": unstored entries are exact zeros; implicit sums bind to
the smallest product term holding every use of the index)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import coiter as ct
from compiler_cases import (
    ENGINES,
    HypothesisChoices,
    Problem,
    Term,
    assert_values,
    build_problem,
    build_schedule,
    schedule_preserves_result,
)


@st.composite
def problems(draw, max_accesses=4, max_extent=5):
    return build_problem(HypothesisChoices(draw), max_accesses, max_extent)


def check(problem):
    statement = problem.statement()
    expected = problem.reference()
    for engine in ENGINES:
        result = ct.evaluate(
            statement, out_format=problem.out_format, engine=engine, **problem.tensors()
        )
        if problem.out_format is not None:
            assert result.format == ct.as_format(problem.out_format, len(problem.result))
        assert_values(result, expected, rtol=1e-12, dtype=np.float64)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems())
def test_random_expressions_match_numpy(problem):
    check(problem)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems(max_accesses=5, max_extent=8))
def test_random_expressions_match_numpy_many(problem):
    check(problem)


def test_reference_itself():
    """The NumPy reference of the generator agrees with hand-written formulas."""
    rng = np.random.default_rng(0)
    a, x, z = rng.random((3, 4)), rng.random(4), rng.random(3)
    p = Problem(
        {"i": 3, "j": 4},
        [
            Term([("A", ("i", "j")), ("x", ("j",))], "2", 1),
            Term([("z", ("i",))], None, -1),
            Term([], "3", 1),
        ],
        ["i"],
        {},
        {"A": a, "x": x, "z": z},
        None,
    )
    assert p.statement() == "R(i) = 2 * A(i,j) * x(j) - z(i) + 3"
    np.testing.assert_allclose(p.reference(), 2 * a @ x - z + 3)
    q = Problem(
        {"i": 3, "j": 4},
        [Term([("A", ("i", "j"))], None, -1, ("max", "j"))],
        ["i"],
        {},
        {"A": a},
        None,
    )
    assert q.statement() == "R(i) = -(max(j, A(i,j)))"
    np.testing.assert_allclose(q.reference(), -a.max(axis=1))
    r = Problem(
        {"i": 3, "j": 4},
        [Term([("A", ("i", "j"))], None, 1), Term([("x", ("j",))], None, 1)],
        ["j", "i"],
        {},
        {"A": a, "x": x},
        None,
    )
    np.testing.assert_allclose(r.reference(), a.T + x[:, None])


# -- random legal schedules (docs/schedules.md): a schedule never changes the result --------------


@st.composite
def schedules(draw, problem):
    return build_schedule(HypothesisChoices(draw), problem)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), problem=problems(max_accesses=3))
def test_random_legal_schedules_preserve_results(data, problem):
    schedule = data.draw(schedules(problem))
    threads = data.draw(st.sampled_from([1, 2, 3]))
    # (An illegal schedule for this statement is refused, never wrong: discarded.)
    assume(schedule_preserves_result(problem, schedule, threads))
