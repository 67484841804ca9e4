"""A frontier member's cost evaluated on input statistics (coiter/autosched/cost_estimate.py),
which schedule="auto" uses to pick a member without timing anything."""

import math

import pytest

from coiter.autosched import frontier
from coiter.autosched.cost_estimate import Query, estimated_tasks, parse_cost


def test_parse_cost_reads_heads_atoms_and_existential_variables():
    queries = parse_cost("{(i)} ∪ {(i,k) | B(i,k) ∧ C($0,$1)} ∪ {() | B($0,$1)}")
    assert queries == [
        Query(("i",), ()),
        Query(("i", "k"), (("B", ("i", "k")), ("C", ("$0", "$1")))),
        Query((), (("B", ("$0", "$1")),)),
    ]


def test_parse_cost_refuses_what_is_not_a_cost():
    with pytest.raises(ValueError, match="not a conjunctive query"):
        parse_cost("{(i) | B(i,k)")


def test_estimates_under_uniform_independent_sparsity():
    extents = {"i": 10, "j": 30, "k": 20}
    shapes = {"B": (10, 20), "C": (20, 30)}
    nonzeros = {"B": 50, "C": 60}
    pB, pC = 50 / 200, 60 / 600

    def tasks(text):
        return estimated_tasks(parse_cost(text), extents, shapes, nonzeros)

    # A dense loop: its extent. A walk of B: its expected nonzeros.
    assert tasks("{(i)}") == 10
    assert math.isclose(tasks("{(i,k) | B(i,k)}"), 10 * 20 * pB)
    # The multiplications of a product: i·k·j·pB·pC.
    assert math.isclose(tasks("{(i,j,k) | B(i,k) ∧ C(k,j)}"), 10 * 30 * 20 * pB * pC)
    # An existential variable: the chance that row i of B has some nonzero, at most 1.
    assert math.isclose(tasks("{(i) | B(i,$0)}"), 10 * min(1.0, 20 * pB))
    # A nonempty input (every argument existential) costs nothing beyond its head.
    assert tasks("{(k) | B($0,$1) ∧ C($2,$3)}") == 20
    # A union: the sum of its queries; a tensor not given (a workspace) counts as full.
    assert math.isclose(tasks("{(i)} ∪ {(i,k) | w(i,k)}"), 10 + 200)


def test_the_estimate_ranks_a_dominated_candidate_above_its_dominator():
    f = frontier("A(i,j) = B(i,k) * C(k,j)", formats={"A": "ds", "B": "ds", "C": "ds"})
    extents = {"i": 1000, "j": 1000, "k": 1000}
    shapes = {"B": (1000, 1000), "C": (1000, 1000)}
    nonzeros = {"B": 10_000, "C": 10_000}
    dominated = [c for c in f.candidates if c.lowered and c.dominated_by is not None]
    assert dominated
    for candidate in dominated:
        mine = estimated_tasks(parse_cost(candidate.cost), extents, shapes, nonzeros)
        theirs = estimated_tasks(parse_cost(candidate.dominated_by.cost), extents, shapes, nonzeros)
        assert theirs < mine, (candidate.program, candidate.dominated_by.program)
