"""A frontier member's cost evaluated on input statistics (coiter/autosched/cost_estimate.py),
which schedule="auto" uses to pick a member without timing anything."""

import math
from types import SimpleNamespace

import pytest

from coiter.autosched import frontier
from coiter.autosched.api import _converted_operands, cheapest_member
from coiter.autosched.candidates import Problem, frontier_bases
from coiter.autosched.cost_estimate import (
    Query,
    estimated_nonzeros,
    estimated_tasks,
    materialized_tasks,
    parse_cost,
    stored_positions,
)
from coiter.autosched.pipeline import KernelStage
from coiter.formats import as_format


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


def test_groups_of_existential_variables_are_independent_of_the_head_atoms():
    extents = {"i": 10, "j": 30, "k": 20}
    shapes = {"B": (10, 20), "C": (20, 30), "D": (30, 30)}
    nonzeros = {"B": 50, "C": 60, "D": 90}
    pB, pC, pD = 50 / 200, 60 / 600, 90 / 900

    def tasks(text):
        return estimated_tasks(parse_cost(text), extents, shapes, nonzeros)

    # For each nonzero of B, a row of C, D being nonempty: nonempty D does not cap B's atoms.
    assert math.isclose(tasks("{(i,j,k) | B(i,k) ∧ C(k,j) ∧ D($0,$1)}"), 10 * 30 * 20 * pB * pC)
    # Two groups of witnesses: row i of B nonempty, and rows k of C and j of D meeting.
    assert math.isclose(
        tasks("{(i,j,k) | B(i,$0) ∧ C(k,$1) ∧ D(j,$1)}"),
        10 * 30 * 20 * min(1.0, 20 * pB) * min(1.0, 30 * pC * pD),
    )


def test_estimated_nonzeros_of_a_product():
    extents = {"j": 30, "k": 20, "l": 40}
    shapes = {"C": (20, 30), "D": (40, 30)}
    nonzeros = {"C": 60, "D": 120}
    pC, pD = 60 / 600, 120 / 1200
    # w(k,l) = Σ_j C(k,j) D(l,j): a pair (k,l) is nonzero when rows k and l meet.
    assert math.isclose(
        estimated_nonzeros("w(k,l) = C(k,j) * D(l,j)", extents, shapes, nonzeros),
        20 * 40 * min(1.0, 30 * pC * pD),
    )
    # No sum: every product of nonzeros is one.
    assert math.isclose(
        estimated_nonzeros("w(k,j,l) = C(k,j) * D(l,j)", extents, shapes, nonzeros),
        20 * 30 * 40 * pC * pD,
    )


def test_stored_positions_count_the_dense_levels_and_the_entries():
    extents = [4, 5, 6]
    assert stored_positions(as_format("ddd", 3), extents, 7.0) == 120
    assert stored_positions(as_format("dss", 3), extents, 7.0) == 4 + 7
    assert stored_positions(as_format("dds", 3), extents, 7.0) == 20 + 7
    # Storage order: the dense levels of dds:2,0,1 hold modes 2 and 0.
    assert stored_positions(as_format("dds:2,0,1", 3), extents, 7.0) == 24 + 7


def test_materialized_tasks_charge_the_workspace_and_its_conversion():
    extents = {"j": 30, "k": 20, "l": 40}
    shapes = {"C": (20, 30), "D": (40, 30)}
    nonzeros = {"C": 60, "D": 120}
    entries = estimated_nonzeros("w(k,j,l) = C(k,j) * D(l,j)", extents, shapes, nonzeros)

    def stages(read_as):
        return [
            KernelStage("w(k,j,l) = C(k,j) * D(l,j)", {"w": "dss"}, "", "w"),
            KernelStage("A(k,l) = w(k,j,l)", {"A": "dd", "w": read_as}, "", "A"),
        ]

    result = as_format("dd", 2)
    in_order = materialized_tasks(stages("dss"), result, extents, shapes, nonzeros)
    assert math.isclose(in_order, 20 + entries)
    # Read with its last two modes swapped: converted, into 20 dense rows of lists.
    converted = materialized_tasks(stages("dss:0,2,1"), result, extents, shapes, nonzeros)
    assert math.isclose(converted, in_order + entries + 20 + entries)
    # A result written transposed is converted back.
    transposed = [KernelStage("A(k,l) = C(k,j) * D(l,j)", {"A": "ds:1,0"}, "", "A")]
    assert materialized_tasks(transposed, as_format("ds", 2), extents, shapes, nonzeros) > 0
    assert materialized_tasks(transposed, as_format("ds:1,0", 2), extents, shapes, nonzeros) == 0


# SpMTTKRP at the paper's statistics (N = 512, p = 0.01): B dss, C and D ds.
MTTKRP = "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)"
MTTKRP_FORMATS = {"A": "ds", "B": "dss", "C": "ds", "D": "ds"}


def _paper_statistics(n=512, p=0.01):
    return {
        "B": SimpleNamespace(shape=(n, n, n), nnz=int(p * n**3)),
        "C": SimpleNamespace(shape=(n, n), nnz=int(p * n * n)),
        "D": SimpleNamespace(shape=(n, n), nnz=int(p * n * n)),
    }


def _estimate(stages, cost, operands):
    extents = {v: 512 for v in "ijkl"}
    shapes = {n: t.shape for n, t in operands.items()}
    nonzeros = {n: t.nnz for n, t in operands.items()}
    tasks = estimated_tasks(parse_cost(cost), extents, shapes, nonzeros)
    return tasks + materialized_tasks(stages, as_format("ds", 2), extents, shapes, nonzeros)


def test_spmttkrp_estimate_prefers_locating_a_small_workspace_at_b_nonzeros():
    """The workspace w = C(k,j) * D(l,j) has about nnz(C)·nnz(D)/N entries. Stored as dense
    (k,l) rows of j lists, the second kernel locates it at each nonzero of B: cheaper than
    merging B's l lists with w's (w as dense k rows of (l,j) lists), and than the single
    kernel i,k,l,j intersecting row k of C with row l of D at each nonzero of B (measured at
    these statistics, one thread: about 17, 42 and 107 ms)."""
    f = frontier(MTTKRP, formats=MTTKRP_FORMATS)
    operands = _paper_statistics()

    def workspace_member(read_as):
        """The member computing w(k,j,l) = C(k,j) * D(l,j) in one kernel and the result at
        loops i,k,l,j in the other, reading w as ``read_as``."""
        for c in f.candidates:
            if (
                c.lowered
                and len(c.stages) == 2
                and c.stages[0].statement == "w(k,j,l) = C(k,j) * D(l,j)"
                and c.stages[1].formats["w"] == read_as
                and c.stages[1].schedule == "reorder(i,k,l,j)"
            ):
                return c
        raise AssertionError(f"no member reading the workspace as {read_as}")

    located, merged = workspace_member("dds:0,2,1"), workspace_member("dss:0,2,1")
    # Converted between the kernels anyway, w is written as dense rows of compressed lists
    # (dense (k,j) levels would fill N² positions).
    assert located.stages[0].formats["w"] == "dss"
    (direct,) = [
        c
        for c in f.candidates
        if c.lowered and c.stages[-1].schedule == "reorder(i,k,l,j)" and len(c.stages) == 1
    ]
    assert located.on_frontier
    costs = {c.index: _estimate(c.stages, c.cost, operands) for c in (located, merged, direct)}
    assert costs[located.index] < costs[merged.index] < costs[direct.index]

    problem = Problem.of(MTTKRP, MTTKRP_FORMATS)
    bases, why_not = frontier_bases(problem)
    assert why_not is None
    picked = cheapest_member(problem, bases, operands)
    assert picked is not None
    assert picked.member.stages[1].formats["w"].startswith("dds:"), picked.member.program
    # It converts D alone (to reach w's entries by D's columns), neither C nor B.
    assert _converted_operands(problem, picked) == {"D"}
