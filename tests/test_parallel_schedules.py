"""Parallel CPU execution (issue: scheduling language and parallel CPU): parallel loops with
every race strategy, parallel assembly of sparse results, and runs with 1, 2 and 7 threads
that agree with the serial kernel (exactly for integer dtypes)."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from compiler_cases import ENGINES


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


@pytest.fixture(params=[1, 2, 7], ids=lambda n: f"{n}threads")
def threads(request):
    previous = ct.get_num_threads()
    ct.set_num_threads(request.param)
    yield request.param
    ct.set_num_threads(previous)


def csr(m, n, density, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = sp.random(m, n, density=density, format="csr", random_state=seed)
    if np.issubdtype(dtype, np.integer):
        a.data = rng.integers(-9, 10, size=a.nnz).astype(dtype)
        a.eliminate_zeros()
    return a.astype(dtype)


def canonical(m):
    m = m.tocsr()
    m.sort_indices()
    return m


def assert_same_csr(result, expected):
    got = result.to_scipy()
    expected = canonical(expected)
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-13, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize(
    "schedule",
    [
        "parallelize(i,cpu_thread,no_races)",
        "parallelize(i,cpu_thread,no_races,static)",
        "parallelize(i,cpu_thread,no_races,dynamic:3)",
        "split(i,i0,i1,5);parallelize(i0,cpu_thread,no_races)",
    ],
)
def test_parallel_assembly_of_spgemm_spadd_sddmm_and_products(schedule, dtype, threads, engine):
    B, C = csr(157, 91, 0.06, 1, dtype), csr(91, 113, 0.06, 2, dtype)
    D, E = csr(157, 91, 0.05, 3, dtype), csr(157, 91, 0.05, 4, dtype)
    fmt = {"B": "csr", "C": "csr", "A": "csr", "D": "csr", "E": "csr"}
    spgemm = ct.compile(
        "A(i,j) = B(i,k) * C(k,j)", formats=fmt, dtype=dtype, schedule=schedule, engine=engine
    )
    assert_same_csr(spgemm(B=ct.asarray(B), C=ct.asarray(C)), B @ C)
    spadd = ct.compile(
        "A(i,j) = B(i,j) + D(i,j) + E(i,j)",
        formats=fmt,
        dtype=dtype,
        schedule=schedule,
        engine=engine,
    )
    assert_same_csr(spadd(B=ct.asarray(B), D=ct.asarray(D), E=ct.asarray(E)), B + D + E)
    product = ct.compile(
        "A(i,j) = B(i,j) * D(i,j)", formats=fmt, dtype=dtype, schedule=schedule, engine=engine
    )
    assert_same_csr(product(B=ct.asarray(B), D=ct.asarray(D)), B.multiply(D))
    rng = np.random.default_rng(5)
    X, Y = rng.integers(-3, 4, (157, 6)).astype(dtype), rng.integers(-3, 4, (6, 91)).astype(dtype)
    sddmm = ct.compile(
        "A(i,j) = B(i,j) * X(i,k) * Y(k,j)",
        formats=dict(fmt, X="dense", Y="dense"),
        dtype=dtype,
        schedule=schedule,
        engine=engine,
    )
    result = sddmm(B=ct.asarray(B), X=X, Y=Y)
    np.testing.assert_allclose(
        result.to_numpy(), B.multiply(X @ Y).toarray(), rtol=1e-12, atol=1e-12
    )
    # Sums that cancel to rounding noise are kept like any nonzero: compare with the serial kernel.
    serial = ct.compile(
        "A(i,j) = B(i,j) * X(i,k) * Y(k,j)",
        formats=dict(fmt, X="dense", Y="dense"),
        dtype=dtype,
        engine=engine,
    )
    assert_same_csr(result, serial(B=ct.asarray(B), X=X, Y=Y).to_scipy())


def test_large_results_grow_far_past_their_first_guess(threads, engine):
    # An outer product of a column and a row: 2n input entries, n^2 result entries (megabytes),
    # so the result's arrays are grown many times over, past the size where they become mappings
    # moved by mremap, and chunk 0's arrays are grown to hold every chunk.
    n = 700
    rng = np.random.default_rng(9)
    col = sp.csr_matrix(rng.uniform(1, 2, (n, 1)))
    row = sp.csr_matrix(rng.uniform(1, 2, (1, n)))
    kern = ct.compile(
        "A(i,j) = B(i,k) * C(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, engine=engine
    )
    for _ in range(3):  # later calls reuse the recycled mappings of earlier results
        result = kern(B=ct.asarray(col), C=ct.asarray(row))
        assert_same_csr(result, col @ row)


def test_repeated_calls_write_no_fresh_memory_from_the_third_on(threads, engine):
    # Fresh pages cost a fault each on first write, which rivals a sparse kernel's own time.
    # A kernel's next call starts its result arrays at the size its last result reached, so
    # the arrays released by earlier calls fit: from the third call (the first two results are
    # alive together) no call maps fresh memory, on one thread or several.
    a, b = csr(3000, 3000, 0.006, 1), csr(3000, 3000, 0.006, 2)
    expected = a @ b
    assert expected.nnz * 8 > 4 << 20  # mapped arrays (1 MiB and up), grown past the guess
    kern = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, engine=engine
    )
    fresh = []
    result = None
    for _ in range(6):
        before = ct._core.result_memory_stats()["fresh_bytes"]
        result = kern(A=a, B=b)
        fresh.append(ct._core.result_memory_stats()["fresh_bytes"] - before)
        assert_same_csr(result, expected)
    assert fresh[2:] == [0, 0, 0, 0], fresh


def test_parallel_assembly_with_empty_rows_and_more_chunks_than_rows(threads):
    B = sp.csr_matrix(np.diag([0, 1.0, 0, 0, 2.0]))
    kern = ct.compile(
        "A(i,j) = B(i,j) * C(i,j)",
        formats={"B": "csr", "C": "csr", "A": "csr"},
        schedule="parallelize(i,cpu_thread,no_races,dynamic:1)",
    )
    assert_same_csr(kern(B=ct.asarray(B), C=ct.asarray(B)), B.multiply(B))
    empty = sp.csr_matrix((0, 5))
    assert kern(B=ct.asarray(empty), C=ct.asarray(empty)).shape == (0, 5)


def test_cancelled_entries_are_dropped_in_parallel_as_serially(threads):
    B = csr(60, 40, 0.1, 6)
    kern = ct.compile(
        "A(i,j) = B(i,j) - C(i,j)",
        formats={"B": "csr", "C": "csr", "A": "csr"},
        schedule="parallelize(i,cpu_thread,no_races)",
    )
    result = kern(B=ct.asarray(B), C=ct.asarray(B))
    assert result.nnz == 0


@pytest.mark.parametrize("races", ["atomics", "temporary", "parallel_reduction", "ignore_races"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_race_strategies_on_a_reduction(races, dtype, threads, engine):
    A = csr(211, 67, 0.08, 7, np.int64).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        A = A + 1j * A
    x = (np.arange(211) % 5 - 2).astype(dtype)
    kern = ct.compile(
        "y(j) = A(i,j) * x(i)",
        formats={"A": "csr"},
        dtype=dtype,
        schedule=f"parallelize(i,cpu_thread,{races})",
        engine=engine,
    )
    y = np.asarray(kern(A=ct.asarray(A), x=x))
    if races == "ignore_races" and threads > 1:
        return  # races are the user's promise there are none; the values may differ
    np.testing.assert_allclose(y, A.T @ x, rtol=1e-12)
    total = ct.compile(
        "s = A(i,j)",
        formats={"A": "csr"},
        dtype=dtype,
        schedule=f"parallelize(i,cpu_thread,{races})",
        engine=engine,
    )
    if races != "ignore_races" or threads == 1:
        np.testing.assert_allclose(complex(np.asarray(total(A=ct.asarray(A)))), A.sum(), rtol=1e-12)


def test_dense_results_in_parallel_agree_exactly_for_integers(threads, engine):
    rng = np.random.default_rng(9)
    A = csr(300, 200, 0.05, 9, np.int64)
    B = rng.integers(-5, 5, (200, 17))
    for schedule in [
        "parallelize(i,cpu_thread,no_races)",
        "split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)",
        "parallelize(i,cpu_thread,no_races,static:7)",
    ]:
        kern = ct.compile(
            "C(i,k) = A(i,j) * B(j,k)",
            formats={"A": "csr", "B": "dense", "C": "dense"},
            dtype=np.int64,
            schedule=schedule,
            engine=engine,
        )
        np.testing.assert_array_equal(np.asarray(kern(A=ct.asarray(A), B=B)), A @ B)


def test_parallel_c_source_has_an_openmp_loop():
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule="split(i,i0,i1,16);parallelize(i0,cpu_thread,no_races)",
    )
    assert "#pragma omp parallel for schedule(dynamic, i0_chunk)" in kern.source("c")


def test_atomic_c_source():
    kern = ct.compile(
        "y(j) = A(i,j) * x(i)", formats={"A": "csr"}, schedule="parallelize(i,cpu_thread,atomics)"
    )
    assert "#pragma omp atomic" in kern.source("c")


def test_kernels_run_concurrently_from_python_threads():
    A = csr(2000, 1500, 0.01, 10)
    x = np.random.default_rng(10).random(1500)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule="parallelize(i,cpu_thread,no_races)"
    )
    At = ct.asarray(A)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(np.asarray(kern(A=At, x=x)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    for r in results:
        np.testing.assert_allclose(r, A @ x)


@pytest.mark.parametrize(
    "stmt,formats,schedule,message",
    [
        (
            "y(j) = A(i,j) * x(i)",
            {"A": "csr"},
            "parallelize(i,cpu_thread,no_races)",
            "not indexed by i",
        ),
        (
            "y(j) = A(i,j) * x(i)",
            {"A": "csr"},
            "split(i,i0,i1,4);parallelize(i1,cpu_vector,atomics)",
            "vectorized",
        ),
        (
            "A(i,j) = B(i,j) * C(i,j)",
            {"B": "csr", "C": "csr", "A": "dcsr"},
            "parallelize(i,cpu_thread,no_races)",
            "assembled in parallel only",
        ),
        (
            "A(i,j) = B(i,j) * C(i,j)",
            {"B": "csr", "C": "csr", "A": "csr"},
            "parallelize(j,cpu_thread,no_races)",
            "coiterates|appends",
        ),
        (
            "y(j) = A(i,j) * x(i)",
            {"A": "csr", "y": "s"},
            "parallelize(i,cpu_thread,atomics)",
            "shared by its iterations",
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": "csr", "C": "csr", "A": "dense"},
            "reorder(i,k,j);parallelize(k,cpu_thread,no_races)",
            "not indexed by k",
        ),
    ],
)
def test_parallel_preconditions(stmt, formats, schedule, message):
    with pytest.raises(ct.ScheduleError, match=message):
        ct.compile(stmt, formats=formats, schedule=schedule)


# -- the default schedule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stmt,formats,tag",
    [
        ("y(i) = A(i,j) * x(j)", {"A": "csr"}, "i: parallel(cpu_thread,no_races,dynamic)"),
        ("y(i) = A(i,j) * x(j)", {"A": "csc"}, "j: parallel(cpu_thread,temporary,dynamic)"),
        (
            "s = A(i,j) * B(i,j)",
            {"A": "csr", "B": "csr"},
            "i: parallel(cpu_thread,temporary,dynamic)",
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            {"A": "csr", "B": "csr", "C": "csr"},
            "i: parallel(cpu_thread,no_races,dynamic)",
        ),
        (
            "C(i,j) = A(k,i) * B(k,j)",
            {"A": "csr", "B": "dense", "C": "dense"},
            "k: parallel(cpu_thread,atomics,dynamic)",
        ),
    ],
)
def test_the_default_schedule_parallelizes_the_outer_loop(stmt, formats, tag, threads):
    kern = ct.compile(stmt, formats=formats)
    assert kern.concrete.endswith(tag)


def test_the_default_schedule_stays_serial_where_the_outer_loop_merges(threads):
    # Two sparse vectors coiterated by the outer loop: no legal parallel loop without a split.
    kern = ct.compile("a(i) = b(i) + c(i)", formats={"b": "s", "c": "s", "a": "d"})
    assert "parallel" not in kern.concrete
    b = ct.asarray(np.array([0, 1.0, 0, 2]), format="s")
    np.testing.assert_array_equal(np.asarray(kern(b=b, c=b)), [0, 2.0, 0, 4])


@pytest.mark.parametrize("races", ["temporary", "parallel_reduction"])
def test_private_copies_are_added_into_the_result_by_blocks(races, threads, engine):
    # The threads' private copies of a result they race on are added into it by blocks of
    # 4096 entries, the blocks divided among the threads (lower/lower_parallel.cpp): a result
    # of three whole blocks and a part of one.
    columns = 3 * 4096 + 5
    A = csr(400, columns, 0.002, 13)
    x = np.random.default_rng(13).random(400) - 0.5
    kern = ct.compile(
        "y(j) = A(i,j) * x(i)",
        formats={"A": "csr"},
        schedule=f"parallelize(i,cpu_thread,{races})",
        engine=engine,
    )
    y = np.asarray(kern(A=ct.asarray(A), x=x))
    assert y.shape == (columns,)
    np.testing.assert_allclose(y, A.T @ x, rtol=1e-12, atol=1e-15)


def test_default_kernels_agree_with_one_thread(threads):
    A = csr(500, 400, 0.02, 11)
    x = np.random.default_rng(11).random(500)
    csc = ct.asarray(A, format="csc")
    kern = ct.compile("y(j) = A(i,j) * x(i)", formats={"A": "csr"})
    np.testing.assert_allclose(np.asarray(kern(A=ct.asarray(A), x=x)), A.T @ x)
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csc"})
    np.testing.assert_allclose(np.asarray(kern(A=csc, x=x[:400])), A @ x[:400])
