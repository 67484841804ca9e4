"""Sparse results assembled in two passes, `assemble(C, two_pass)` (docs/schedules.md): the
kernel counts each row's entries, the caller turns the counts into offsets, and a second pass
fills the rows in place, in parallel when the row loop is. A GPU assembles sparse results this
way (test_cuda_codegen.py, test_cuda_device.py); on the CPU the same kernels run on both
engines and are checked here against SciPy and NumPy."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import coiter as ct
from compiler_cases import ENGINES, HypothesisChoices, build_problem, schedule_preserves_result

rng = np.random.default_rng(11)
TWO_PASS = "assemble(C,two_pass)"
PARALLEL_ROWS = TWO_PASS + ";parallelize(i,cpu_thread,no_races)"


def random_csr(m, n, density, seed, skew=False):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    if skew:  # a few long rows, many empty ones
        A = sp.vstack([sp.random(2, n, density=0.9, random_state=seed), A[2:]]).tocsr()
        A = A.multiply(np.arange(m)[:, None] % 3 != 1).tocsr()
        A.eliminate_zeros()
    return A


A = random_csr(90, 70, 0.08, 1, skew=True)
B = random_csr(90, 70, 0.08, 2)
E = random_csr(90, 70, 0.08, 3)
D = rng.standard_normal((90, 70))
M, N = rng.standard_normal((90, 6)), rng.standard_normal((6, 70))

# (expression, operands, expected dense result, expected stored entries)
CASES = [
    ("C(i,j) = A(i,j) + B(i,j)", dict(A=A, B=B), (A + B).toarray(), (abs(A) + abs(B)).nnz),
    (
        "C(i,j) = A(i,j) * B(i,j)",
        dict(A=A, B=B),
        A.multiply(B).toarray(),
        abs(A).multiply(abs(B)).nnz,
    ),
    (
        "C(i,j) = A(i,j) + B(i,j) + E(i,j)",
        dict(A=A, B=B, E=E),
        (A + B + E).toarray(),
        (abs(A) + abs(B) + abs(E)).nnz,
    ),
    (
        "C(i,j) = A(i,j) * (B(i,j) + E(i,j))",
        dict(A=A, B=B, E=E),
        A.multiply(B + E).toarray(),
        abs(A).multiply(abs(B) + abs(E)).nnz,
    ),
    ("C(i,j) = A(i,j) * D(i,j)", dict(A=A, D=D), A.multiply(D).toarray(), A.nnz),
    # SDDMM: a reduction inside each entry
    ("C(i,j) = A(i,j) * M(i,k) * N(k,j)", dict(A=A, M=M, N=N), A.multiply(M @ N).toarray(), A.nnz),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("schedule", [TWO_PASS, PARALLEL_ROWS])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "expr,operands,expected,entries", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_two_pass_results_match_scipy(expr, operands, expected, entries, engine, schedule, threads):
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        C = ct.evaluate(expr, **operands, out_format="csr", schedule=schedule, engine=engine)
    finally:
        ct.set_num_threads(previous)
    got = C.to_scipy()
    got.check_format(full_check=True)
    assert got.has_sorted_indices
    assert got.nnz == entries
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_coo_operand_in_two_passes(engine):
    """The loop over rows merges COO's row list with the dense rows: serial (a merge loop
    cannot be divided among threads), counted and filled all the same."""
    C = ct.evaluate(
        "C(i,j) = A(i,j) + B(i,j)",
        A=A.tocoo(),
        B=B,
        out_format="csr",
        schedule=TWO_PASS,
        engine=engine,
    ).to_scipy()
    assert C.nnz == (abs(A) + abs(B)).nnz
    np.testing.assert_allclose(C.toarray(), (A + B).toarray(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_one_pass_and_two_pass_agree_on_every_entry_they_keep(engine):
    """Entries whose value comes out zero: one pass drops them (as SciPy does), two passes keep
    them (the counting pass computes no values); the values agree everywhere."""
    one = ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=A, B=-A, out_format="csr", engine=engine)
    two = ct.evaluate(
        "C(i,j) = A(i,j) + B(i,j)", A=A, B=-A, out_format="csr", schedule=TWO_PASS, engine=engine
    )
    assert one.to_scipy().nnz == 0
    kept = two.to_scipy()
    assert kept.nnz == A.nnz and not kept.data.any()
    np.testing.assert_array_equal(kept.indices, A.indices)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_width_is_kept(index_dtype):
    P, Q = A.copy(), B.copy()
    for X in (P, Q):
        X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    C = ct.evaluate(
        "C(i,j) = A(i,j) + B(i,j)", A=P, B=Q, out_format="csr", schedule=PARALLEL_ROWS
    ).to_scipy()
    assert C.indptr.dtype == index_dtype and C.indices.dtype == index_dtype
    np.testing.assert_allclose(C.toarray(), (A + B).toarray())


def test_empty_and_disjoint_results():
    top = sp.csr_matrix(np.triu(np.ones((40, 40)), 1))
    bottom = sp.csr_matrix(np.tril(np.ones((40, 40)), -1))
    C = ct.evaluate(
        "C(i,j) = A(i,j) * B(i,j)", A=top, B=bottom, out_format="csr", schedule=PARALLEL_ROWS
    ).to_scipy()
    assert C.nnz == 0 and C.shape == (40, 40) and not C.indptr.any()
    empty = sp.csr_matrix((0, 5))
    C = ct.evaluate(
        "C(i,j) = A(i,j) + B(i,j)", A=empty, B=empty, out_format="csr", schedule=TWO_PASS
    )
    assert C.to_scipy().shape == (0, 5)


def test_a_workspace_result_in_two_passes():
    """SpGEMM (a dense workspace per row) counted and filled serially."""
    C = ct.evaluate(
        "C(i,j) = A(i,k) * B(k,j)", A=A, B=B.T.tocsr(), out_format="csr", schedule=TWO_PASS
    ).to_scipy()
    np.testing.assert_allclose(C.toarray(), (A @ B.T).toarray(), rtol=1e-12, atol=1e-12)


def test_a_dense_level_above_the_rows():
    """Three modes, dense-dense-compressed ("dds"): the parents are (i, j) pairs."""
    X = ct.random((5, 6, 30), density=0.2, format="dds", seed=4)
    Y = ct.random((5, 6, 30), density=0.2, format="dds", seed=5)
    C = ct.evaluate(
        "C(i,j,k) = X(i,j,k) + Y(i,j,k)",
        X=X,
        Y=Y,
        out_format="dds",
        schedule="assemble(C,two_pass);parallelize(i,cpu_thread,no_races)",
    )
    np.testing.assert_allclose(C.to_numpy(), X.to_numpy() + Y.to_numpy())


def test_formats_two_passes_cannot_fill_are_refused():
    with pytest.raises(ct.ScheduleError, match="two passes"):
        ct.compile(
            "C(i,j) = A(i,j) + B(i,j)",
            formats={"A": "csr", "B": "csr", "C": "dcsr"},
            schedule=TWO_PASS,
        )
    with pytest.raises(ct.ScheduleError, match="two passes"):
        ct.compile(
            "C(i,j) = A(i,j) + B(i,j)",
            formats={"A": "csr", "B": "csr", "C": "coo"},
            schedule=TWO_PASS,
        )


def test_only_a_loop_over_rows_fills_in_parallel():
    with pytest.raises(ct.ScheduleError, match="filled in parallel only by a loop over its rows"):
        ct.compile(  # (A in DCSR: a CSR A would give C its pattern, filled without appends)
            "C(i,j) = A(i,j) * D(i,j)",
            formats={"A": "dcsr", "D": "dd", "C": "csr"},
            schedule=TWO_PASS + ";parallelize(j,cpu_thread,no_races)",
        )


def test_unknown_strategy_names_the_choices():
    with pytest.raises(ct.ScheduleError, match="two_pass"):
        ct.compile(
            "C(i,j) = A(i,j) + B(i,j)",
            formats={"A": "csr", "B": "csr", "C": "csr"},
            schedule="assemble(C,three_pass)",
        )


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_expressions_in_two_passes_match_numpy(data):
    """Random expressions and operand formats (the compiler's property tests) with a CSR-like
    result (its last level compressed under dense ones), counted and filled, serially or by
    rows on threads, on both engines, against NumPy."""
    problem = build_problem(HypothesisChoices(data.draw), 3, 5)
    assume(len(problem.result) in (2, 3))
    problem.out_format = "d" * (len(problem.result) - 1) + "s"
    parallel = data.draw(st.booleans())
    schedule = "assemble(R,two_pass)"
    if parallel:
        schedule += f";parallelize({problem.result[0]},cpu_thread,no_races)"
    threads = data.draw(st.sampled_from([1, 2]))
    # (An outer loop that is not over the rows, or that merges, is refused: discarded.)
    assume(schedule_preserves_result(problem, schedule, threads))
