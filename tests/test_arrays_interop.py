"""Tensors with the libraries around them: pickle and copy (multiprocessing, joblib, Dask),
SciPy's linear algebra with coiter doing the products, SciPy sparse types in and out,
pydata/sparse, pandas sparse frames and Dask arrays."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import coiter as ct
from conftest import MATRIX_FORMATS
from test_arrays_operators import make

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")


@pytest.mark.parametrize("fmt", sorted(MATRIX_FORMATS))
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64, np.bool_])
def test_pickle_and_deepcopy_round_trip(fmt, dtype):
    t = ct.asarray(
        ct.random((6, 8), 0.3, "coo", dtype=dtype, seed=1).to_numpy(),
        format=MATRIX_FORMATS[fmt],
        name="A",
    )
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        assert back.format == t.format and back.dtype == t.dtype and back.name == "A"
        assert back.index_dtype == t.index_dtype
        np.testing.assert_array_equal(back.to_numpy(), t.to_numpy())
        assert not np.shares_memory(back.values, t.values)


@pytest.mark.parametrize(
    "fmt",
    [
        ct.Format([ct.dense, ct.hashed(buckets=8)]),
        ct.Format([ct.dense, ct.hashed(unique=False)]),
        ct.Format([ct.dense, ct.compressed(full=True)]),
    ],
    ids=str,
)
def test_pickle_keeps_level_options(fmt):
    # Formats without a text form travel level by level: every configured property and a
    # hashed level's bucket count survive.
    t = ct.asarray(np.arange(1.0, 13.0).reshape(3, 4), format=fmt)
    back = pickle.loads(pickle.dumps(t))
    assert back.format == t.format
    np.testing.assert_array_equal(back.to_numpy(), t.to_numpy())


def test_pickle_of_a_lazy_result_computes_it():
    a, da = make((5, 5), 0.5, "csr", seed=1)
    lazy = (a + a) @ np.ones(5)
    back = pickle.loads(pickle.dumps(lazy))
    np.testing.assert_allclose(back.to_numpy(), (da + da) @ np.ones(5))


def test_tensors_cross_process_boundaries():
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    a, da = make((20, 20), 0.2, "csr", seed=1)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        result = pool.submit(_row_sums, a).result()
    np.testing.assert_allclose(result.to_numpy(), da.sum(axis=1))


def _row_sums(t):
    return t.sum(axis=1)


def _spd(n, seed=1):
    m = sp.random(n, n, density=5 / n, random_state=seed, format="csr")
    return (m + m.T + sp.eye(n) * 10).tocsr()


def test_scipy_solvers_run_on_tensors():
    m = _spd(500)
    t = ct.asarray(m)
    b = np.linspace(1, 2, 500)
    op = spla.aslinearoperator(t)
    assert op.shape == (500, 500) and op.dtype == np.float64
    for solver in (spla.cg, spla.gmres, spla.bicgstab, spla.minres):
        x, info = solver(t, b, rtol=1e-10)
        assert info == 0
        np.testing.assert_allclose(m @ x, b, rtol=1e-7, atol=1e-7)
    w = spla.eigsh(t, k=3, return_eigenvectors=False)
    np.testing.assert_allclose(np.sort(w), np.sort(spla.eigsh(m, k=3, return_eigenvectors=False)))
    r = sp.random(120, 80, density=0.05, random_state=2, format="csr")
    s = spla.svds(ct.asarray(r), k=3, return_singular_vectors=False, random_state=0)
    np.testing.assert_allclose(
        np.sort(s), np.sort(spla.svds(r, k=3, return_singular_vectors=False, random_state=0))
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_matvec_rmatvec_and_blocks(dtype):
    r = sp.random(30, 20, density=0.2, random_state=3, format="csr").astype(dtype)
    if dtype == np.complex128:
        r = r * (1 + 2j)
    t = ct.asarray(r)
    x, y, X = np.arange(20.0), np.arange(30.0), np.arange(60.0).reshape(20, 3)
    np.testing.assert_allclose(t.matvec(x), r @ x)
    np.testing.assert_allclose(t.matvec(x.reshape(-1, 1)), (r @ x).reshape(-1, 1))
    np.testing.assert_allclose(t.rmatvec(y), r.conj().T @ y)
    np.testing.assert_allclose(t.matmat(X), r @ X)
    np.testing.assert_allclose(t.rmatmat(np.ones((30, 2))), r.conj().T @ np.ones((30, 2)))
    op = spla.aslinearoperator(t)
    np.testing.assert_allclose(op.H @ y, r.conj().T @ y)
    with pytest.raises(ct.ShapeError, match="matvec"):
        t.matvec(np.ones(3))


def test_products_of_other_index_widths_operand_dtypes_and_layouts():
    # A product's kernel is remembered per matrix format and dtypes and called straight; an
    # operand it cannot read in place (int64 indices after int32 ones, an integer or strided x)
    # takes the general call, and every result is an array of its own, kept intact by later
    # products (the values are read from the kernel's result without a Tensor around them).
    r = sp.random(300, 200, density=0.05, random_state=4, format="csr")
    narrow = ct.asarray(r)
    wide_r = r.copy()
    wide_r.indptr, wide_r.indices = wide_r.indptr.astype(np.int64), wide_r.indices.astype(np.int64)
    wide = ct.asarray(wide_r)
    assert narrow.index_dtype == np.int32 and wide.index_dtype == np.int64
    x = np.linspace(-1.0, 1.0, 200)
    first = narrow.matvec(x)
    kept = first.copy()
    for t in (narrow, wide, narrow):
        np.testing.assert_allclose(t.matvec(x), r @ x)
        np.testing.assert_allclose(t.matvec(np.arange(200)), r @ np.arange(200))
        np.testing.assert_allclose(
            t.matvec(np.linspace(0, 1, 400)[::2]), r @ np.linspace(0, 1, 400)[::2]
        )
        np.testing.assert_allclose(t.rmatvec(np.ones(300)), r.T @ np.ones(300))
        np.testing.assert_allclose(np.asarray(t @ x), r @ x)
    np.testing.assert_array_equal(first, kept)
    assert first.flags.writeable and not np.shares_memory(first, narrow.matvec(x))


def test_a_solvers_products_call_the_remembered_kernel_straight(monkeypatch):
    # After the first product, a contiguous vector of the right extent goes straight to the
    # remembered kernel (linalg._straight); anything else takes the general path, which checks.
    from coiter import linalg

    r = sp.random(50, 40, density=0.1, random_state=5, format="csr")
    t = ct.asarray(r)
    x, y = np.linspace(0.0, 1.0, 40), np.linspace(0.0, 1.0, 50)
    np.testing.assert_allclose(t.matvec(x), r @ x)
    np.testing.assert_allclose(t.rmatvec(y), r.T @ y)

    def general(*args, **kwargs):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(linalg, "_apply", general)
    for v in (x, 2.0 * x, np.ones(40)):
        np.testing.assert_allclose(t.matvec(v), r @ v)
    for v in (y, np.ones(50)):
        np.testing.assert_allclose(t.rmatvec(v), r.T @ v)
    with pytest.raises(AssertionError, match="general path"):
        t.matvec(np.linspace(0, 1, 80)[::2])  # strided: the general path
    with pytest.raises(AssertionError, match="general path"):
        t.rmatvec(np.linspace(0, 1, 100)[::2])
    monkeypatch.undo()
    with pytest.raises(ct.ShapeError, match="matvec"):
        t.matvec(np.ones(41))
    with pytest.raises(ct.ShapeError, match="rmatvec"):
        t.rmatvec(np.ones(40))
    # A pending definition is computed first (its own kernel is not yet remembered).
    lazy = t * 2.0
    np.testing.assert_allclose(lazy.matvec(x), 2.0 * (r @ x))
    np.testing.assert_allclose(lazy.matvec(x), 2.0 * (r @ x))


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"])
@pytest.mark.parametrize("container", ["array", "matrix"])
def test_asarray_of_every_scipy_type(kind, container):
    dense = np.zeros((6, 4))
    dense[[0, 2, 3, 5], [1, 0, 3, 2]] = [1.0, 2.0, 3.0, 4.0]
    m = getattr(sp, f"{kind}_{container}")(dense)
    np.testing.assert_array_equal(ct.asarray(m).to_numpy(), dense)


def test_scipy_conversions():
    a, da = make((6, 4), 0.5, "csr", seed=1)
    for kind in ("csr", "csc", "coo"):
        m = getattr(a, "to" + kind)()
        assert m.format == kind
        np.testing.assert_array_equal(m.toarray(), da)
    assert a.tocsr(copy=True).indptr is not a.tocsr().indptr


_SCIPY_CLASSES = [
    getattr(sp, f"{kind}_{container}")
    for kind in ("csr", "csc", "coo", "bsr", "dia", "lil", "dok")
    for container in ("array", "matrix")
]


@pytest.mark.parametrize("cls", _SCIPY_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "dense"])
def test_scipy_constructors_convert_tensors_without_a_dense_copy(cls, fmt, monkeypatch):
    a, da = make((6, 4), 0.5, fmt, seed=1)
    # A dense copy (np.asarray) would now raise: SciPy must take the sparse route.
    monkeypatch.setattr(ct.config, "max_dense_bytes", 8)
    m = cls(a)
    assert type(m) is cls
    np.testing.assert_array_equal(m.toarray(), da)
    assert cls(a, dtype=np.float32).dtype == np.float32


def test_scipy_sees_tensors_as_sparse_and_shares_compressed_arrays():
    a, da = make((6, 4), 0.5, "csr", seed=1)
    assert sp.issparse(a) and not sp.issparse(np.ones(3))
    m = sp.csr_array(a)
    # SciPy's own CSR -> CSR copies nothing, and neither does a tensor's.
    assert np.shares_memory(m.indices, a.levels[1].crd) and np.shares_memory(m.data, a.values)
    np.testing.assert_array_equal(a.indptr, a.levels[1].pos)
    np.testing.assert_array_equal(a.T.indices, a.levels[1].crd)  # CSR.T is CSC
    for other in ("coo", "dcsr", "dense"):
        t = a.asformat(other)
        assert not hasattr(t, "indptr") and not hasattr(t, "indices")
        np.testing.assert_array_equal(t.data, t.values)
    with pytest.raises(AttributeError, match="to_scipy"):
        _ = a.asformat("coo").indptr
    # SciPy functions that take sparse input take tensors as they are.
    np.testing.assert_array_equal(sp.hstack([a, sp.csr_array(da)]).toarray(), np.hstack([da, da]))


def test_scipy_constructors_on_a_tensor_too_large_to_densify():
    # 1,000,000 x 1,000,000 with 100,000 entries: dense it would be 8 TB.
    n = 1_000_000
    rng = np.random.default_rng(0)
    m = sp.csr_array(
        (rng.random(100_000), (rng.integers(0, n, 100_000), rng.integers(0, n, 100_000))),
        shape=(n, n),
    )
    m.sum_duplicates()
    big = ct.asarray(m)
    for cls in (sp.csr_array, sp.csc_matrix, sp.coo_array, sp.lil_array, sp.dok_array):
        converted = cls(big)
        assert converted.shape == (n, n) and converted.nnz == m.nnz
        assert (converted.tocsr() != m).nnz == 0


def test_dot_of_a_matrix_and_a_numpy_array_is_computed_as_scipy_does():
    # SciPy's LinearOperator (aslinearoperator, and every solver given a tensor) calls
    # T.dot(X) with NumPy arrays: a NumPy array comes back at once, as from SciPy's arrays.
    a, da = make((6, 4), 0.5, "csr", seed=1)
    x, X = np.arange(4.0), np.arange(8.0).reshape(4, 2)
    for operand in (x, X, x.reshape(-1, 1)):
        got = a.dot(operand)
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, da @ operand)
    assert isinstance(a @ x, ct.Tensor)  # the operator stays lazy (and fuses)
    assert isinstance(spla.aslinearoperator(a), spla.LinearOperator)


def test_pydata_sparse_both_ways():
    sparse = pytest.importorskip("sparse")
    a, da = make((6, 5), 0.4, "csr", seed=1)
    coo = a.to_pydata()
    assert isinstance(coo, sparse.COO)
    np.testing.assert_array_equal(coo.todense(), da)
    gcxs = a.to_pydata("gcxs")
    assert isinstance(gcxs, sparse.GCXS) and np.shares_memory(gcxs.data, a.values)
    back = ct.asarray(gcxs)
    assert back.format == ct.as_format("csr", 2) and np.shares_memory(back.values, a.values)
    np.testing.assert_array_equal(ct.asarray(coo).to_numpy(), da)
    np.testing.assert_array_equal(ct.asarray(a.T.to_pydata("gcxs")).to_numpy(), da.T)
    cube = sparse.random((3, 4, 5), density=0.3, random_state=1)
    np.testing.assert_array_equal(ct.asarray(cube).to_numpy(), cube.todense())
    np.testing.assert_array_equal(
        ct.asarray(cube, format="csf").to_pydata().todense(), cube.todense()
    )
    with pytest.raises(ct.FormatError, match="fill value"):
        ct.asarray(sparse.COO.from_numpy(np.ones((2, 2)), fill_value=1.0))


def test_pandas_sparse_frames_both_ways():
    pd = pytest.importorskip("pandas")
    a, da = make((6, 5), 0.4, "csr", seed=1)
    frame = a.to_pandas(columns=list("abcde"))
    assert all(isinstance(d, pd.SparseDtype) for d in frame.dtypes)
    assert list(frame.columns) == list("abcde")
    np.testing.assert_array_equal(frame.sparse.to_dense().to_numpy(), da)
    back = ct.asarray(frame)
    assert back.nnz == np.count_nonzero(da)  # sparsity kept, no dense copy
    np.testing.assert_array_equal(back.to_numpy(), da)
    series = a[2].to_pandas()
    assert isinstance(series.dtype, pd.SparseDtype)
    np.testing.assert_array_equal(series.to_numpy(), da[2])
    np.testing.assert_array_equal(ct.asarray(series).to_numpy(), da[2])
    np.testing.assert_array_equal(ct.asarray(pd.DataFrame(da)).to_numpy(), da)


def test_dask_arrays_of_tensors():
    da_mod = pytest.importorskip("dask.array")
    a, da = make((40, 30), 0.2, "csr", seed=1)
    x = da_mod.from_array(a, chunks=(10, 15))
    np.testing.assert_allclose(float(x.sum().compute()), da.sum())
    doubled = x.map_blocks(lambda block: block * 2).compute()
    assert isinstance(doubled, ct.Tensor)
    np.testing.assert_allclose(doubled.to_numpy(), 2 * da)
    np.testing.assert_allclose(np.asarray(x[5:25, 3:9].compute().to_numpy()), da[5:25, 3:9])
    # the processes scheduler pickles the tensors
    np.testing.assert_allclose(
        np.asarray((x.T @ np.ones(40)).compute(scheduler="sync")), da.T @ np.ones(40)
    )


def test_threadpoolctl_sees_and_limits_coiters_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = ct.get_num_threads()
    (info,) = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "coiter"]
    assert info["num_threads"] == before and info["version"] == ct.__version__
    with threadpoolctl.threadpool_limits(1, user_api="coiter"):
        assert ct.get_num_threads() == 1
    assert ct.get_num_threads() == before
