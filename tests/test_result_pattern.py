"""Sparse results that keep an operand's pattern (docs/compiler.md, "Results that keep an operand's
pattern"; cin/result_pattern.hpp): S = A .* (M @ N), A * x, A * 2, A / D, ... are computed at
A's positions, without appending, into a result with A's index arrays (copied) and A's nonzero
count, explicit zeros included as SciPy's A.multiply(dense) keeps them. Against NumPy and SciPy,
on both engines, serially, by rows on threads and by nonzeros on threads; and where a result
may not keep an operand's pattern (a narrower or wider pattern, another format, a workspace in
between), the appended assembly."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coiter as ct

rng = np.random.default_rng(11)


@pytest.fixture(params=["c", "llvm"])
def engine(request):
    if request.param == "llvm" and not ct._core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    return request.param


def skewed(m, n, density, seed):
    """A CSR matrix with three long rows above random ones (rows of very different work)."""
    r = np.random.default_rng(seed)
    long = sp.random_array((3, n), density=0.9, format="csr", random_state=r)
    rest = sp.random_array((m - 3, n), density=density, format="csr", random_state=r)
    return sp.vstack([long, rest]).tocsr()


A = skewed(120, 90, 0.05, 1)
M, N = rng.random((120, 7)), rng.random((7, 90))
X = rng.random(90)
X[::4] = 0.0  # (products with these are explicit zeros of the result, as in SciPy)
D = rng.random((120, 90)) + 0.5

# statement, formats besides A's (A and the result share A's), operands besides A, expected
KEPT = {
    "sddmm": (
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)",
        {"M": "dd", "N": "dd"},
        {"M": M, "N": N},
        A.toarray() * (M @ N),
    ),
    "scaled columns": ("S(i,j) = A(i,j) * x(j)", {"x": "d"}, {"x": X}, A.toarray() * X),
    "scalar": ("S(i,j) = A(i,j) * 2", {}, {}, 2 * A.toarray()),
    "quotient": ("S(i,j) = A(i,j) / D(i,j)", {"D": "dd"}, {"D": D}, A.toarray() / D),
    "sum of kept terms": (
        "S(i,j) = A(i,j) * D(i,j) - A(i,j)",
        {"D": "dd"},
        {"D": D},
        A.toarray() * D - A.toarray(),
    ),
}

NONZERO_SPLIT = (
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);parallelize(fp0,cpu_thread,no_races)"
)


def compiled(stmt, fmt, others, schedule=None, engine=None):
    formats = {"A": fmt, "S": fmt, **others}
    return ct.compile(stmt, formats=formats, schedule=schedule, engine=engine)


# (pos() over A in "sum of kept terms", which reads A twice, is refused: see below)
SCHEDULES = [
    (name, schedule)
    for name in sorted(KEPT)
    for schedule in [None, "parallelize(i,cpu_thread,no_races)", NONZERO_SPLIT]
    if not (name == "sum of kept terms" and schedule == NONZERO_SPLIT)
]


@pytest.mark.parametrize("name, schedule", SCHEDULES)
def test_results_keep_the_operands_pattern(name, schedule, engine):
    stmt, others, operands, expected = KEPT[name]
    previous = ct.get_num_threads()
    ct.set_num_threads(2)
    try:
        kernel = compiled(stmt, "csr", others, schedule, engine)
        S = kernel(A=A, **operands)
    finally:
        ct.set_num_threads(previous)
    np.testing.assert_allclose(S.to_numpy(), expected, rtol=1e-13, atol=1e-13)
    # A's pattern, explicit zeros included; index arrays of its own
    result = S.to_scipy()
    assert S.nnz == A.nnz
    assert np.array_equal(result.indptr, A.indptr) and np.array_equal(result.indices, A.indices)
    assert not np.shares_memory(result.indices, A.indices)
    # stored at A's positions, nothing appended
    source = kernel.source("c")
    assert "S_vals[pA2]" in source and "S2_count" not in source


def test_entries_stored_once_are_overwritten_not_zeroed_first(engine):
    # One store per entry of A: the values need no zeroing (lower_result_overwrite.cpp). Each
    # call's result reuses the memory the last one released (large arrays are recycled,
    # result_memory.hpp), so a value left unwritten would show the last call's.
    big = skewed(4000, 3000, 0.02, 5)  # (2 MB of values: a recycled mapping)
    m, n = rng.random((4000, 5)), rng.random((5, 3000))
    kernel = ct.compile(
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)",
        formats={"A": "csr", "M": "dd", "N": "dd", "S": "csr"},
        engine=engine,
    )
    assert "S_vals[pA2] = acc0;" in kernel.source("c")
    for factor in (3.0, -1.0, 0.5):
        S = kernel(A=big, M=factor * m, N=n)
        np.testing.assert_allclose(S.to_numpy(), factor * big.toarray() * (m @ n), rtol=1e-12)
        del S
    # A loop over k around the store (between the loops over A's positions) adds into each
    # entry: the values start at zero then.
    around = "split(i,i0,i1,16);pos(j,jp,A(i,j));split(jp,jp0,jp1,8);reorder(i0,i1,jp0,k,jp1)"
    summed = compiled(*KEPT["sddmm"][:1], "csr", KEPT["sddmm"][1], around, engine)
    assert "S_vals[pA2] += " in summed.source("c")
    for factor in (3.0, -1.0):
        S = summed(A=A, M=factor * M, N=N)
        np.testing.assert_allclose(S.to_numpy(), factor * A.toarray() * (M @ N), rtol=1e-12)
        del S


def test_positions_of_an_operand_read_twice_are_refused_with_the_reason():
    # Legality asks of each access alone whether the statement vanishes where it does: with A
    # read twice, neither access alone makes A(i,j) * D(i,j) - A(i,j) zero.
    stmt, others = KEPT["sum of kept terms"][:2]
    with pytest.raises(ct.ScheduleError, match="not zero where it is"):
        compiled(stmt, "csr", others, NONZERO_SPLIT)


def test_an_explicit_zero_is_kept_as_scipys_multiply_keeps_it():
    S = ct.evaluate("S(i,j) = A(i,j) * x(j)", A=A, x=X, out_format="csr")
    expected = A.multiply(X).tocsr()
    assert S.nnz == expected.nnz == A.nnz
    assert np.count_nonzero(S.to_scipy().data == 0) == np.count_nonzero(expected.data == 0) > 0


@pytest.mark.parametrize("fmt", ["csc", "coo", "dcsr", "ds"])
def test_every_appended_format_keeps_it(fmt, engine):
    B = ct.asarray(A, format=fmt)
    kernel = ct.compile(
        "S(i,j) = B(i,j) * x(j) * 3",
        formats={"B": fmt, "x": "d", "S": fmt},
        engine=engine,
    )
    S = kernel(B=B, x=X)
    np.testing.assert_allclose(S.to_numpy(), A.toarray() * X * 3, rtol=1e-13)
    assert S.nnz == A.nnz and S.format == B.format
    for ours, theirs in zip(S.levels, B.levels):
        for name in theirs.arrays:
            assert np.array_equal(ours.arrays[name], theirs.arrays[name])


def test_a_three_mode_tensor_keeps_it(engine):
    T = sp.random_array((6, 40), density=0.3, random_state=3).tocoo()
    coords = np.stack([T.row, T.col // 8, T.col % 8], axis=1)
    B = ct.from_coords(coords, T.data, (6, 5, 8), "csf")
    c = rng.random(8)
    kernel = ct.compile(
        "S(i,j,k) = B(i,j,k) * c(k)", formats={"B": "csf", "c": "d", "S": "csf"}, engine=engine
    )
    S = kernel(B=B, c=c)
    np.testing.assert_allclose(S.to_numpy(), B.to_numpy() * c, rtol=1e-13)
    assert S.nnz == B.nnz and "S3_count" not in kernel.source("c")


# statement, formats: results that must not keep A's pattern (A is CSR)
APPENDED = {
    # a narrower pattern: the intersection with another sparse operand
    "product of sparse": ("S(i,j) = A(i,j) * B(i,j)", {"B": "csr", "S": "csr"}),
    # a wider one: a sum with a dense operand
    "sum with dense": ("S(i,j) = A(i,j) + D(i,j)", {"D": "dd", "S": "csr"}),
    # another format than A's
    "other format": ("S(i,j) = A(i,j) * x(j)", {"x": "d", "S": "dcsr"}),
    # a sparse operand along a dense level of the result (its rows): whole rows would be zeros
    "sparse row factor": ("S(i,j) = A(i,j) * v(i)", {"v": "s", "S": "csr"}),
    # A read transposed (into a CSC result: A's rows are its columns)
    "transposed": ("S(i,j) = A(j,i) * 2", {"S": "csc"}),
}


@pytest.mark.parametrize("name", sorted(APPENDED))
def test_results_that_cannot_keep_it_are_appended(name, engine):
    stmt, formats = APPENDED[name]
    B = skewed(120, 90, 0.05, 2)
    a, b = A.toarray(), B.toarray()
    v = sp.random_array((120, 1), density=0.3, format="csc", random_state=4).toarray().ravel()
    operands = {
        "A": A if name != "transposed" else A.T.tocsr(),
        "B": B,
        "D": D,
        "x": X,
        "v": ct.asarray(v, format="s"),
    }
    used = {n: v for n, v in operands.items() if f"{n}(" in stmt.split("=", 1)[1]}
    kernel = ct.compile(stmt, formats={"A": "csr", **formats}, engine=engine)
    S = kernel(**used)
    expected = {
        "product of sparse": a * b,
        "sum with dense": a + D,
        "other format": a * X,
        "transposed": 2 * a,
        "sparse row factor": a * v[:, None],
    }[name]
    np.testing.assert_allclose(S.to_numpy(), expected, rtol=1e-13)
    assert "_count" in kernel.source("c")
    if name in ("product of sparse", "sparse row factor"):  # the narrower pattern, zeros dropped
        assert S.nnz == np.count_nonzero(expected)


def test_a_workspace_between_the_operand_and_the_store_appends():
    kernel = ct.compile(
        "S(i,j) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "S": "csr"},
        schedule="precompute(A(i,j) * x(j), j, jw)",
    )
    np.testing.assert_allclose(kernel(A=A, x=X).to_numpy(), A.toarray() * X, rtol=1e-13)
    assert "S2_count" in kernel.source("c")


def test_out_refills_a_kept_pattern():
    stmt, others = KEPT["sddmm"][:2]
    kernel = compiled(stmt, "csr", others)
    first = kernel(A=A, M=M, N=N)
    again = kernel(A=A, M=2 * M, N=N, out=first)
    np.testing.assert_allclose(again.to_numpy(), 2 * A.toarray() * (M @ N), rtol=1e-13)


def test_operands_whose_index_arrays_change_are_checked_again():
    # The result's structure is A's, read at A's positions: a corrupted A is refused, never read
    # out of bounds.
    bad = A.copy()
    bad.indices = bad.indices.copy()
    bad.indices[bad.indptr[1] - 1] = 10_000  # (row 0 still sorted: SciPy calls it canonical)
    with pytest.raises(ct.FormatError, match="outside"):
        ct.evaluate("S(i,j) = A(i,j) * x(j)", A=bad, x=X, out_format="csr")


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["csr", "csc", "coo", "dcsr"]),
    st.sampled_from(["*", "/"]),
    st.floats(-3, 3).filter(lambda v: abs(v) > 0.1),
    st.booleans(),
    st.integers(0, 2**31 - 1),
)
def test_random_kept_patterns_match_numpy(fmt, op, scalar, negate, seed):
    r = np.random.default_rng(seed)
    B = sp.random_array((15, 11), density=r.uniform(0, 0.6), format="csr", random_state=r)
    Dm = r.random((15, 11)) + 0.5
    rhs = f"B(i,j) {op} D(i,j) * {scalar!r}"
    rhs = f"-({rhs})" if negate else rhs
    S = ct.evaluate(f"S(i,j) = {rhs}", B=ct.asarray(B, format=fmt), D=Dm, out_format=fmt)
    b = B.toarray()
    expected = (b * Dm if op == "*" else b / Dm) * scalar
    np.testing.assert_allclose(S.to_numpy(), -expected if negate else expected, rtol=1e-12)
    assert S.nnz == B.nnz
