"""The schedule space of the autoscheduler (coiter/autosched/space.py, trimming.py,
candidates.py): each trimming pass on mappings it must keep and drop, the concordancy score of
the search paper's examples, parameter filling, and the base candidates."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter.autosched import space, trimming
from coiter.autosched.candidates import (
    WORKSPACE,
    Problem,
    base_candidates,
    loop_order_candidates,
    workspace_candidates,
)
from coiter.autosched.space import Context, Derived, Mapping, Partition, Step

SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "C(i,k) = A(i,j) * B(j,k)"


def whole(name):
    return Derived(name, (name,), "whole")


def split_loops(v, command="split"):
    step = Step(command, (v,))
    return (
        Derived(v + "0", (v,), "outer", step),
        Derived(v + "1", (v,), "inner", step, chunk_index=False),
    )


def context(stmt=SPMV, formats=None, order=("i", "j")):
    problem = Problem.of(stmt, formats or {"A": "csr"})
    return Context(problem, Partition((), (), ()), order)


# -- mapping passes ------------------------------------------------------------------------


def test_one_parallel_loop():
    i, j = whole("i"), whole("j")
    assert trimming.one_parallel_loop(Mapping((i, j), frozenset({i})), context())
    assert not trimming.one_parallel_loop(Mapping((i, j), frozenset({i, j})), context())


def test_parallel_outermost():
    i, j = whole("i"), whole("j")
    assert trimming.parallel_outermost(Mapping((i, j), frozenset({i})), context())
    assert not trimming.parallel_outermost(Mapping((i, j), frozenset({j})), context())
    assert trimming.parallel_outermost(Mapping((i, j)), context())


def test_parallel_chunks_only():
    i0, i1 = split_loops("i")
    j = whole("j")
    assert trimming.parallel_chunks_only(Mapping((i0, i1, j), frozenset({i0})), context())
    # The inner loop of a split iterates within a chunk: never parallel.
    assert not trimming.parallel_chunks_only(Mapping((i1, i0, j), frozenset({i1})), context())


def test_no_useless_partition():
    i0, i1 = split_loops("i")
    j = whole("j")
    # Split, nothing parallel, the two loops adjacent: the split changes nothing.
    assert not trimming.no_useless_partition(Mapping((i0, i1, j)), context())
    assert trimming.no_useless_partition(Mapping((i0, i1, j), frozenset({i0})), context())
    assert trimming.no_useless_partition(Mapping((i0, i1, j), vector=i1), context())
    # Not adjacent: the inner loop moved inside j (blocking), kept.
    assert trimming.no_useless_partition(Mapping((i0, j, i1)), context())


def test_vector_innermost():
    i, j, k = whole("i"), whole("j"), whole("k")
    i0, i1 = split_loops("i")
    assert trimming.vector_innermost(Mapping((i, j, k), vector=k), context())
    assert trimming.vector_innermost(Mapping((i, j, k), vector=j), context())  # last two
    assert not trimming.vector_innermost(Mapping((i, j, k), vector=i), context())
    # A split's outer loop strides over chunks: not vectorized.
    assert not trimming.vector_innermost(Mapping((j, i1, i0), vector=i0), context())
    assert trimming.vector_innermost(Mapping((j, i0, i1), vector=i1), context())


def test_keeps_loop_order():
    i0, i1 = split_loops("i")
    j = whole("j")
    ctx = context(order=("i", "j"))
    assert trimming.keeps_loop_order(Mapping((i0, i1, j)), ctx)
    assert trimming.keeps_loop_order(Mapping((i0, j, i1)), context(order=("j", "i")))
    assert not trimming.keeps_loop_order(Mapping((j, i0, i1)), ctx)


def test_sparse_iteration():
    # pos over A's level j must come after every loop over i (A stores i above j).
    step = Step("pos", ("j",), "A(i,j)")
    jp = Derived("jp", ("j",), "whole", step, positions=True, access="A")
    i0, i1 = split_loops("i")
    ctx = context()
    assert trimming.sparse_iteration(Mapping((i0, i1, jp)), ctx)
    assert not trimming.sparse_iteration(Mapping((i0, jp, i1)), ctx)


def test_recovered_order_of_the_papers_example():
    # split(X1,x11,x12).split(X2,x21,x22).split(X3,x31,x32).reorder(x11,x32,x31,x12,x21,x22)
    # recovers X3, then X1, then X2 (§2.5.2).
    x11, x12 = split_loops("X1")
    x21, x22 = split_loops("X2")
    x31, x32 = split_loops("X3")
    order = (x11, x32, x31, x12, x21, x22)
    assert space.recovered_order(order) == ("X3", "X1", "X2")


# -- partition passes ----------------------------------------------------------------------


def fuse_partition(access):
    return Partition((Step("fuse", ("i", "j"), access),), (), ())


def test_no_dense_fuse():
    sparse = Problem.of(SPMV, {"A": "csr"})
    dense = Problem.of(SPMV, {"A": "dense"})
    assert trimming.no_dense_fuse(fuse_partition("A(i,j)"), sparse)
    assert not trimming.no_dense_fuse(fuse_partition("A(i,j)"), dense)


def test_fuse_within_one_tensor():
    problem = Problem.of("y(i) = A(i,j) * B(i,j)", {"A": "csr", "B": "csr"})
    assert trimming.fuse_within_one_tensor(fuse_partition("A(i,j)"), problem)
    # CSC stores j above i: fusing i into j is not parent into child there.
    transposed = Problem.of("y(i) = A(i,j) * B(i,j)", {"A": "csc", "B": "csr"})
    assert not trimming.fuse_within_one_tensor(fuse_partition("A(i,j)"), transposed)


# -- concordant iteration ------------------------------------------------------------------


def test_concordancy_of_spmm():
    # §2.5.2: SpMM with A sparse in j, order i -> j -> k scores 3 (A: i<j, B: j<k, C: i<k), the
    # maximum; j -> i -> k loses A's preference.
    problem = Problem.of(SPMM, {"A": "csr"})
    assert trimming.concordancy(("i", "j", "k"), problem) == 3
    assert trimming.concordancy(("j", "i", "k"), problem) == 2
    orders = [("i", "j", "k"), ("i", "k", "j"), ("k", "i", "j")]
    assert trimming.concordant_loop_orders(orders, problem) == [True, False, False]


SPGEMM = "A(i,j) = B(i,k) * C(k,j)"


def test_useful_workspace():
    # Gustavson's order i -> k -> j appends to a CSR row of A: a workspace over j helps.
    sparse_result = Problem.of(SPGEMM, {"A": "csr", "B": "csr", "C": "csr"})
    assert trimming.useful_workspace(("i", "k", "j"), sparse_result)
    # Into a dense result the products accumulate in place.
    dense_result = Problem.of(SPGEMM, {"A": "dense", "B": "csr", "C": "csr"})
    assert not trimming.useful_workspace(("i", "k", "j"), dense_result)
    # Over a summed variable (the inner product's k) it would hold one scalar.
    assert not trimming.useful_workspace(("i", "j", "k"), sparse_result)
    assert not trimming.useful_workspace((), sparse_result)


# -- base candidates -----------------------------------------------------------------------


def test_base_candidates_are_the_default_and_the_legal_loop_orders():
    csr = base_candidates(SPMV, {"A": "csr"})
    assert [c.schedule for c in csr] == ["", "reorder(i,j)"]
    assert [c.schedule for c in base_candidates(SPMV, {"A": "csc"})] == ["", "reorder(j,i)"]
    dense = base_candidates(SPMV, {"A": "dense"})
    assert {c.loop_order for c in dense[1:]} == {("i", "j"), ("j", "i")}
    for c in csr + dense:
        assert ct.schedule_problem(SPMV, c.schedule, formats={"A": "csr"}) is None or (c in dense)


def test_workspace_candidates_precompute_the_row_of_a_sparse_result():
    problem = Problem.of(SPGEMM, {"A": "csr", "B": "csr", "C": "csr"})
    bases = loop_order_candidates(problem)
    found, dropped = workspace_candidates(problem, bases, trimming.useful_workspace)
    orders = [b.loop_order for b in bases if b.loop_order]
    useful = [o for o in orders if trimming.useful_workspace(o, problem)]
    assert useful and dropped == len(orders) - len(useful)
    assert {c.schedule for c in found} == {
        f"reorder({','.join(o)});precompute(B(i,k) * C(k,j),[j],[jw]{fmt})"
        for o in useful
        for fmt in ("", ",hashed")
    }
    assert all(c.origin == WORKSPACE and problem.legality(c.schedule) is None for c in found)
    B = sp.random_array((40, 30), density=0.1, format="csr", random_state=0)
    C = sp.random_array((30, 50), density=0.1, format="csr", random_state=1)
    for c in found:
        A = ct.evaluate(SPGEMM, schedule=c.schedule, B=B, C=C)
        np.testing.assert_allclose(A.to_numpy(), (B @ C).toarray(), rtol=1e-12)
    # A dense result keeps no workspace candidate.
    dense = Problem.of(SPGEMM, {"A": "dense", "B": "csr", "C": "csr"})
    assert (
        workspace_candidates(dense, loop_order_candidates(dense), trimming.useful_workspace)[0]
        == []
    )


# -- parameter filling ---------------------------------------------------------------------


def build(stmt, formats, **kwargs):
    problem = Problem.of(stmt, formats)
    return space.build(
        problem,
        loop_order_candidates(problem),
        trimming.PARTITION_PASSES,
        trimming.MAPPING_PASSES,
        trimming.concordant_loop_orders,
        **kwargs,
    )


def find(built, arm_part, parallel):
    return next(
        t
        for t in built.templates
        if str(t.partition) == arm_part and bool(t.mapping.parallel) == parallel
    )


def test_split_sizes_that_make_one_chunk_are_dropped():
    built = build(SPMV, {"A": "csr"}, extents={"i": 100, "j": 50}, threads=2)
    template = find(built, "split(i)", parallel=True)
    assert built.parameters(template) == [(16,), (64,)]  # 256 >= 100 rows: one chunk
    divide = find(built, "divide(i)", parallel=True)
    assert built.parameters(divide) == [(2,), (8,), (32,)]  # threads x (1, 4, 16)


def test_race_strategy_follows_the_result():
    # Parallel over i writes y(i) alone: no races, and nothing else is tried.
    built = build(SPMV, {"A": "csr"}, threads=2)
    rows = [s for s in space.fill(built, find(built, "no cut", parallel=True))]
    assert rows and all("no_races" in s for s in rows)
    # y(j) = A(i,j) x(i) in parallel over i: iterations share y's entries, so the legal race
    # strategies (atomics and per-thread copies) are both filled.
    built = build("y(j) = A(i,j) * x(i)", {"A": "csr"}, threads=2)
    texts = list(space.fill(built, find(built, "no cut", parallel=True)))
    races = {s.split("cpu_thread,")[1].split(",")[0] for s in texts}
    assert races == {"atomics", "temporary"}
    assert {s.rsplit(",", 1)[1].split(")")[0] for s in texts} >= {"dynamic", "static"}


def test_every_filled_schedule_is_legal_and_computes_spmv():
    A = sp.random(60, 40, density=0.2, format="csr", random_state=1)
    x = np.random.default_rng(0).random(40)
    built = build(SPMV, {"A": "csr"}, extents={"i": 60, "j": 40}, nonzeros={"A": A.nnz}, threads=2)
    filled = [s for t in built.templates for s in itertools.islice(space.fill(built, t), 1)]
    assert len(filled) >= 12
    for text in filled[:: len(filled) // 12]:
        assert ct.schedule_problem(SPMV, text, formats={"A": "csr"}) is None
        y = ct.evaluate(SPMV, schedule=text, A=A, x=x)
        np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, err_msg=text)


def test_the_space_counts_what_each_pass_dropped():
    built = build(SPMM, {"A": "csr"})
    counts = built.counts
    assert counts.partitions_expanded == 0  # partitions are expanded when the search draws them
    templates = built.templates
    assert counts.partitions_expanded == counts.partitions_kept == len(built.arms)
    assert counts.loop_orders_kept == 1 < counts.loop_orders
    assert counts.templates == len(templates) < counts.mappings
    assert set(counts.dropped_by) <= {p.name for p in trimming.MAPPING_PASSES} | {
        p.name for p in trimming.PARTITION_PASSES
    }
    assert counts.dropped_by["one parallel loop"] > 0


@pytest.mark.parametrize("stmt", [SPMV, SPMM])
def test_no_template_cuts_a_variable_twice(stmt):
    for template in build(stmt, {"A": "csr"}).templates:
        cut = [v for s in template.partition.steps for v in s.variables]
        assert len(cut) == len(set(cut)) and len(template.partition.steps) <= space.MAX_STEPS
