"""Hashed result levels built in one pass (docs/compiler.md, "Result formats the compiler
assembles"): a hashed last level under dense levels is inserted into by the kernel, which
reruns with larger tables when one fills; other hashed results are computed compressed and
packed."""

import numpy as np
import pytest

import coiter as ct
from compiler_cases import ENGINES, random_array

BUCKETS8 = ct.Format([ct.dense, ct.hashed(buckets=8)])
MATRIX_FORMATS = ["dh", "dh:1,0", BUCKETS8]


def fmt_id(fmt):
    return fmt if isinstance(fmt, str) else "d_hashed8"


def check(result, expected, fmt):
    """``result`` is in ``fmt``, passes the full validation (every entry reachable by probing
    from its home bucket) and holds the values of ``ct.asarray(expected, format=fmt)``."""
    fmt = ct.as_format(fmt, np.ndim(expected))
    assert result.format == fmt
    result._storage.validate()
    np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    packed = ct.asarray(expected, format=fmt)
    np.testing.assert_allclose(result.to_numpy(), packed.to_numpy(), rtol=1e-12, atol=1e-12)
    # Every nonzero of the expected result is stored (explicit zeros may be stored besides).
    coords, values = result.coords()
    stored = {tuple(int(c) for c in row) for row in np.asarray(coords)}
    assert {tuple(int(c) for c in row) for row in np.argwhere(expected)} <= stored
    return result


def kernel(statement, formats, engine, schedule=None):
    return ct.compile(statement, formats=formats, engine=engine, schedule=schedule)


def is_one_pass(kern):
    """The kernel inserts into the hashed level itself (no packing after the call)."""
    return kern._built is kern._result


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", MATRIX_FORMATS, ids=fmt_id)
@pytest.mark.parametrize("op", ["add", "mul", "sub_scaled"])
def test_elementwise(engine, fmt, op):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (9, 7)), random_array(rng, (9, 7))
    statement, ref = {
        "add": ("C(i,j) = A(i,j) + B(i,j)", a + b),
        "mul": ("C(i,j) = A(i,j) * B(i,j)", a * b),
        "sub_scaled": ("C(i,j) = 2 * A(i,j) - B(i,j)", 2 * a - b),
    }[op]
    kern = kernel(statement, {"A": "csr", "B": "dcsr", "C": fmt}, engine)
    assert is_one_pass(kern)
    check(kern(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="dcsr")), ref, fmt)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("x_format", ["dense", "s"])
def test_spmv_into_hashed_vector(engine, x_format):
    rng = np.random.default_rng(2)
    a, x = random_array(rng, (11, 8)), random_array(rng, (8,), density=0.5)
    kern = kernel("y(i) = A(i,j) * x(j)", {"A": "csr", "x": x_format, "y": "h"}, engine)
    assert is_one_pass(kern)
    check(kern(A=ct.asarray(a, format="csr"), x=ct.asarray(x, format=x_format)), a @ x, "h")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", MATRIX_FORMATS, ids=fmt_id)
def test_spgemm_row_by_row(engine, fmt):
    # Loop order i,k,j: row k of B is added into row i of C by random inserts, no workspace.
    rng = np.random.default_rng(3)
    a, b = random_array(rng, (10, 6)), random_array(rng, (6, 9))
    formats = {"A": "csr", "B": "csr", "C": fmt}
    kern = kernel("C(i,j) = A(i,k) * B(k,j)", formats, engine, schedule="reorder(i,k,j)")
    assert is_one_pass(kern)
    if fmt != "dh:1,0":
        assert "where" not in kern.concrete
    check(kern(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="csr")), a @ b, fmt)


@pytest.mark.parametrize("engine", ENGINES)
def test_reductions(engine):
    rng = np.random.default_rng(4)
    a = random_array(rng, (12, 5))
    t = random_array(rng, (4, 5, 6))
    rows = kernel("y(i) = A(i,j)", {"A": "csr", "y": "h"}, engine)
    check(rows(A=ct.asarray(a, format="csr")), a.sum(axis=1), "h")
    summed = kernel("C(i,j) = T(i,j,k)", {"T": "csf", "C": "dh"}, engine)
    check(summed(T=ct.asarray(t, format="csf")), t.sum(axis=2), "dh")
    scaled = kernel("C(i,j,k) = 3 * T(i,j,k)", {"T": "csf", "C": "ddh"}, engine)
    assert is_one_pass(scaled)
    check(scaled(T=ct.asarray(t, format="csf")), 3 * t, "ddh")


def skewed(rng, rows, cols, full_rows):
    """A matrix with one entry per row except ``full_rows``, which are full."""
    a = np.zeros((rows, cols))
    a[np.arange(rows), rng.integers(0, cols, rows)] = 1.0 + rng.random(rows)
    for r in full_rows:
        a[r] = 1.0 + rng.random(cols)
    return a


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("threads", [1, 2])
def test_skewed_rows_rerun_with_larger_tables(engine, threads):
    # The first W follows the last result's fullest row (4 buckets for one entry): the full
    # rows fill it, and the kernel reruns until W holds them; the W it ends with is the one
    # packing chooses.
    rng = np.random.default_rng(5)
    a = skewed(rng, 64, 300, [0, 40])
    b = skewed(rng, 64, 300, [7])
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        kern = kernel("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": "dh"}, engine)
        # A call on rows of one entry makes 4 buckets the next call's first guess.
        flat = skewed(rng, 64, 300, [])
        check(
            kern(A=ct.asarray(flat, format="csr"), B=ct.asarray(flat, format="csr")), 2 * flat, "dh"
        )
        result = kern(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="csr"))
    finally:
        ct.set_num_threads(previous)
    check(result, a + b, "dh")
    assert result.levels[1].size == ct.asarray(a + b, format="dh").levels[1].size == 1024


@pytest.mark.parametrize("engine", ENGINES)
def test_requested_buckets(engine):
    # Rows that fit in the requested 8 buckets keep them (a table may be full); a row of more
    # entries makes W the power of two packing chooses.
    rng = np.random.default_rng(6)
    a = np.zeros((6, 20))
    for r in range(1, 6):
        a[r, rng.choice(20, 3, replace=False)] = rng.random(3) + 1.0
    a[0, :8] = 1.0
    kern = kernel("C(i,j) = 2 * A(i,j)", {"A": "csr", "C": BUCKETS8}, engine)
    small = check(kern(A=ct.asarray(a, format="csr")), 2 * a, BUCKETS8)
    assert small.levels[1].size == 8
    a[0, :9] = 1.0
    large = check(kern(A=ct.asarray(a, format="csr")), 2 * a, BUCKETS8)
    assert large.levels[1].size == ct.asarray(2 * a, format=BUCKETS8).levels[1].size == 32


@pytest.mark.parametrize("engine", ENGINES)
def test_zero_values_and_cancelled_sums(engine):
    # A store of zero inserts nothing (A - A stores no entry); a sum whose terms cancel was
    # inserted by its first term and stays as an explicit zero.
    a = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]])
    diff = kernel("C(i,j) = A(i,j) - B(i,j)", {"A": "csr", "B": "csr", "C": "dh"}, engine)
    result = check(diff(A=ct.asarray(a, format="csr"), B=ct.asarray(a, format="csr")), 0 * a, "dh")
    assert len(result.coords()[1]) == 0
    # Row 0 of A @ B adds 1 * 1 and 1 * -1 into C(0,0) (loop order i,k,j: two stores).
    a = np.array([[1.0, 1.0], [0.0, 2.0]])
    b = np.array([[1.0, 3.0], [-1.0, 0.0]])
    formats = {"A": "csr", "B": "csr", "C": "dh"}
    spgemm = kernel("C(i,j) = A(i,k) * B(k,j)", formats, engine, schedule="reorder(i,k,j)")
    result = check(
        spgemm(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="csr")), a @ b, "dh"
    )
    stored = dict(zip(map(tuple, np.asarray(result.coords()[0]).tolist()), result.coords()[1]))
    assert stored == {(0, 0): 0.0, (0, 1): 3.0, (1, 0): -2.0}


@pytest.mark.parametrize("engine", ENGINES)
def test_out_reuses_the_tables(engine):
    rng = np.random.default_rng(7)
    a = random_array(rng, (8, 6))
    kern = kernel("C(i,j) = 2 * A(i,j)", {"A": "csr", "C": "dh"}, engine)
    out = kern(A=ct.asarray(a, format="csr"))
    sizes = [level.size for level in out.levels]
    # Same pattern, new values: the compute-only kernel fills the given tables.
    result = kern(out=out, A=ct.asarray(3 * a, format="csr"))
    assert result is out
    check(out, 6 * a, "dh")
    assert [level.size for level in out.levels] == sizes
    other = a.copy()
    other[0, other[0] == 0] = 1.0
    with pytest.raises(ct.FormatError, match="structure"):
        kern(out=out, A=ct.asarray(other, format="csr"))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", ["hs", "hh"])
def test_other_hashed_results_are_packed(engine, fmt):
    rng = np.random.default_rng(8)
    a, b = random_array(rng, (7, 5)), random_array(rng, (7, 5))
    kern = kernel("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": fmt}, engine)
    assert not is_one_pass(kern)
    assert ct.as_format(fmt, 2).result_assembly_format == ct.as_format("ss", 2)
    check(kern(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="csr")), a + b, fmt)


def test_result_assembly_format():
    for one_pass in ["h", "dh", "ddh", "dh:1,0"]:
        fmt = ct.as_format(one_pass, len(one_pass.split(":")[0]))
        assert fmt.result_assembly_format == fmt
    assert BUCKETS8.result_assembly_format == BUCKETS8
    assert ct.as_format("dhd", 3).result_assembly_format == ct.as_format("dsd", 3)
    assert ct.as_format("sh", 2).result_assembly_format == ct.as_format("ss", 2)


def test_parallel_loop_must_own_its_tables():
    # Parallel rows of C own their tables; with C stored by columns (dh:1,0) the rows of A
    # would insert into the same column tables.
    statement = "C(i,j) = A(i,j) * B(i,j)"
    schedule = "parallelize(i,cpu_thread,no_races)"
    own = ct.schedule_problem(statement, schedule, formats={"A": "csr", "B": "csr", "C": "dh"})
    assert own is None
    shared = ct.schedule_problem(
        statement, schedule, formats={"A": "csr", "B": "csr", "C": "dh:1,0"}
    )
    assert shared is not None and "same hash tables" in shared


@pytest.mark.parametrize("engine", ENGINES)
def test_parallel_rows_insert_in_parallel(engine):
    rng = np.random.default_rng(9)
    a = skewed(rng, 200, 120, [3, 150])
    b = random_array(rng, (200, 120), density=0.05)
    previous = ct.get_num_threads()
    ct.set_num_threads(2)
    try:
        kern = kernel(
            "C(i,j) = A(i,j) + B(i,j)",
            {"A": "csr", "B": "csr", "C": "dh"},
            engine,
            schedule="parallelize(i,cpu_thread,no_races)",
        )
        result = kern(A=ct.asarray(a, format="csr"), B=ct.asarray(b, format="csr"))
    finally:
        ct.set_num_threads(previous)
    check(result, a + b, "dh")


@pytest.mark.parametrize("engine", ENGINES)
def test_fused_position_loop_inserts(engine):
    # A loop over A's positions (rows fused with columns) stores each row's sum through an
    # insert, not through the dense result position a dense y would use.
    rng = np.random.default_rng(10)
    a, x = random_array(rng, (9, 7)), rng.standard_normal(7)
    kern = kernel(
        "y(i) = A(i,j) * x(j)",
        {"A": "csr", "x": "dense", "y": "h"},
        engine,
        schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4)",
    )
    check(kern(A=ct.asarray(a, format="csr"), x=ct.asarray(x)), a @ x, "h")


def test_parallel_position_loop_over_hashed_rows_is_refused():
    problem = ct.schedule_problem(
        "y(i) = A(i,j) * x(j)",
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4);parallelize(fp0,cpu_thread,atomics)",
        formats={"A": "csr", "x": "dense", "y": "h"},
    )
    assert problem is not None and "same hash tables" in problem


def test_parallel_fused_position_loop_over_hashed_rows_is_refused():
    # Fused rows and columns: a row's positions may fall into two threads' chunks.
    problem = ct.schedule_problem(
        "C(i,j) = A(i,j) * 2",
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4);parallelize(fp0,cpu_thread,no_races)",
        formats={"A": "csr", "C": "dh"},
    )
    assert problem is not None and "same hash tables" in problem
