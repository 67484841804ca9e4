"""target="cuda" on a real GPU, against NumPy (docs/reference.md, "Targets"). Skipped where there is
no GPU; scripts/gpu_check.sh runs them on one. The compilation of the same kernels is tested
everywhere in test_cuda_codegen.py."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not ct.cuda.is_available(), reason="needs an NVIDIA GPU, its driver and NVRTC"
    ),
]

rng = np.random.default_rng(7)


def sparse(m, n, density, fmt="csr", skew=False):
    A = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    if skew:  # a few long rows
        B = sp.random(3, n, density=0.9, format="csr", random_state=rng)
        A = sp.vstack([B, A[3:]]).tocsr()
    return A.asformat(fmt)


@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_spmv(fmt, skew):
    A = sparse(300, 200, 0.05, fmt, skew)
    x = rng.standard_normal(200)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x, target="cuda")
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, atol=1e-12)


def test_spmv_device_tensors_stay_on_device():
    A = sparse(400, 400, 0.02)
    x = rng.standard_normal(400)
    dA, dx = ct.asarray(A).to("cuda"), ct.asarray(x).to("cuda")
    assert dA.device == "cuda" and dx.device == "cuda"
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, target="cuda"
    )
    y = kern(A=dA, x=dx)
    assert y.device == "cuda"
    np.testing.assert_allclose(y.to("cpu").to_numpy(), A @ x, rtol=1e-12)
    assert y.to("cpu").device == "cpu"
    # A GPU result used as the next operand stays on the device.
    z = kern(A=dA, x=y)
    assert z.device == "cuda"
    np.testing.assert_allclose(z.to_numpy(), A @ (A @ x), rtol=1e-10)


@pytest.mark.parametrize(
    "schedule",
    [
        None,
        "parallelize(i,gpu_thread,no_races)",
        "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,parallel_reduction)",
        "parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,parallel_reduction)",
        # TACO's nonzero-balanced SpMV: chunks of nonzeros per thread, rows added atomically.
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);parallelize(fp0,gpu_thread,atomics)",
        # TACO's published GPU SpMV schedule (thesis Fig 1-14, in coiter's syntax): nonzero tiles
        # per block, warp and thread; only the innermost loop names atomics.
        "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,2048);split(fpos1,warp,fpos2,256);"
        "split(fpos2,thread,thr_nz,8);reorder(block,warp,thread,thr_nz);parallelize(block,gpu_block,no_races);"
        "parallelize(warp,gpu_warp,ignore_races);parallelize(thread,gpu_thread,atomics)",
    ],
)
def test_spmv_schedules(schedule):
    A = sparse(1000, 700, 0.01, skew=True)
    x = rng.standard_normal(700)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "y": "d"},
        schedule=schedule,
        target="cuda",
    )
    np.testing.assert_allclose(kern(A=A, x=x).to_numpy(), A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cols", [1, 32, 33, 128])
def test_spmm(cols):
    A = sparse(400, 300, 0.03)
    B = rng.standard_normal((300, cols))
    C = ct.evaluate("C(i,j) = A(i,k) * B(k,j)", A=A, B=B, target="cuda")
    np.testing.assert_allclose(C.to_numpy(), A @ B, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "expr,subscripts",
    [
        ("y(i) = A(i,j) * x(j) + z(i)", None),
        ("C(i,j) = A(i,j) + D(i,j)", "sum"),
        ("y(j) = A(i,j) * x(i)", "ij,i->j"),
        ("y(i) = A(i,j) * D(i,j)", "ij,ij->i"),
    ],
)
def test_expressions(expr, subscripts):
    A = sparse(120, 90, 0.05)
    x = rng.standard_normal(120 if "x(i)" in expr else 90)
    z, D = rng.standard_normal(120), rng.standard_normal((120, 90))
    given = {"A": A, "x": x, "z": z, "D": D}
    operands = {n: v for n, v in given.items() if f"{n}(" in expr.split("=", 1)[1]}
    got = ct.evaluate(expr, target="cuda", **operands).to_numpy()
    dense = {n: (v.toarray() if sp.issparse(v) else v) for n, v in operands.items()}
    if subscripts is None:
        want = dense["A"] @ dense["x"] + dense["z"]
    elif subscripts == "sum":
        want = dense["A"] + dense["D"]
    else:
        want = np.einsum(subscripts, *dense.values())
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_ttv_and_mttkrp():
    B = ct.random((30, 20, 10), density=0.1, format="csf", seed=3)
    c = rng.standard_normal(10)
    C, D = rng.standard_normal((20, 8)), rng.standard_normal((10, 8))
    dense = B.to_numpy()
    got = ct.evaluate("A(i,j) = B(i,j,k) * c(k)", B=B, c=c, target="cuda")
    np.testing.assert_allclose(
        got.to_numpy(), np.einsum("ijk,k->ij", dense, c), rtol=1e-12, atol=1e-12
    )
    got = ct.evaluate("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", B=B, C=C, D=D, target="cuda")
    np.testing.assert_allclose(
        got.to_numpy(), np.einsum("ijk,jl,kl->il", dense, C, D), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("trial", range(16))
def test_random_expressions_match_einsum(trial):
    """Random products of sparse (random formats) and dense operands, on the GPU, against
    np.einsum on dense copies."""
    r = np.random.default_rng(trial)
    cases = [
        ("y(i) = A(i,j) * x(j)", "ij,j->i"),
        ("y(i) = A(i,j) * B(i,j) * x(j)", "ij,ij,j->i"),
        ("C(i,j) = A(i,k) * M(k,j)", "ik,kj->ij"),
        ("y(i) = A(i,j) * B(i,j)", "ij,ij->i"),
    ]
    expr, subscripts = cases[trial % len(cases)]
    # Row-major formats: a column-major operand of these sums over rows would need a workspace,
    # which the GPU does not have yet (docs/gpu.md).
    fa, fb = (str(f) for f in r.choice(["csr", "dense", "coo", "dcsr"], 2))
    A = ct.random((23, 17), density=0.3, format=fa, seed=trial)
    B = ct.random((23, 17), density=0.3, format=fb, seed=100 + trial)
    M, x = r.standard_normal((17, 9)), r.standard_normal(17)
    given = {"A": A, "B": B, "M": M, "x": x}
    operands = {n: v for n, v in given.items() if f"{n}(" in expr.split("=", 1)[1]}
    # Dense results: the GPU does not assemble sparse ones yet (docs/gpu.md).
    order = len(expr.split("=")[0].split(",")) if "(" in expr.split("=")[0] else 0
    got = ct.evaluate(expr, target="cuda", out_format="d" * order, **operands).to_numpy()
    dense = [v.to_numpy() if isinstance(v, ct.Tensor) else v for v in operands.values()]
    np.testing.assert_allclose(
        got, np.einsum(subscripts, *dense), rtol=1e-11, atol=1e-11, err_msg=f"{expr} {fa} {fb}"
    )


def test_kernel_cached_on_disk_with_architecture(tmp_path, monkeypatch):
    import subprocess
    import sys

    code = (
        "import coiter as ct, numpy as np, scipy.sparse as sp;"
        "k = ct.compile('y(i) = A(i,j) * x(j)', formats={'A':'csr','x':'d','y':'d'}, "
        "target='cuda');"
        "A = sp.random(50, 40, density=0.1, format='csr', random_state=0); x = np.ones(40);"
        "assert np.allclose(k(A=A, x=x).to_numpy(), A @ x);"
        "print(ct.cache_info()['disk_hits'], ct.cache_info()['compiles'])"
    )
    env = {**__import__("os").environ, "COITER_CACHE_DIR": str(tmp_path)}
    first = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    second = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert first.stdout.split() == ["0", "1"]
    assert second.stdout.split() == ["1", "0"]


@pytest.mark.parametrize(
    "expr", ["y(i) = A(i,j) * x(j)", "C(i,j) = A(i,j) + B(i,j)", "C(i,j) = A(i,j) * B(i,j)"]
)
def test_corrupted_operands_are_refused_before_they_reach_the_gpu(expr):
    """GPU kernels do not check the coordinates they load: operands are checked whole when
    they are copied to the device, per call for host operands, once for device tensors."""
    A, B = sparse(50, 40, 0.1), sparse(50, 40, 0.1)
    A.indices[3] = 40  # one past the last column
    x = rng.standard_normal(40)
    operands = {"A": A, "B": B, "x": x}
    given = {n: v for n, v in operands.items() if f"{n}(" in expr.split("=", 1)[1]}
    with pytest.raises(ct.FormatError):
        ct.evaluate(expr, **given, target="cuda")
    with pytest.raises(ct.FormatError):
        ct.asarray(A).to("cuda")


def test_spgemm_without_a_workspace():
    """SpGEMM by rows accumulates each row in a workspace, which GPU threads do not have yet
    (test_cuda_codegen.py checks the refusal); ct.evaluate finds an order without one."""
    A, B = sparse(60, 50, 0.1), sparse(50, 40, 0.1)
    C = ct.evaluate("C(i,j) = A(i,k) * B(k,j)", A=A, B=B, out_format="csr", target="cuda")
    np.testing.assert_allclose(C.to_scipy().toarray(), (A @ B).toarray(), rtol=1e-12, atol=1e-12)


def csr_with_index(A, index_dtype):
    A = A.tocsr(copy=True)
    A.indices, A.indptr = A.indices.astype(index_dtype), A.indptr.astype(index_dtype)
    return A


# Sparse results assembled on the device in two passes: (expression, operands, SciPy's result,
# the entries kept: every entry the iteration produces, as in cuSPARSE).
def sparse_result_cases():
    A, B, E = sparse(300, 200, 0.05, skew=True), sparse(300, 200, 0.05), sparse(300, 200, 0.05)
    D, M, N = (
        rng.standard_normal((300, 200)),
        rng.standard_normal((300, 7)),
        rng.standard_normal((7, 200)),
    )
    return [
        ("C(i,j) = A(i,j) + B(i,j)", dict(A=A, B=B), A + B, (abs(A) + abs(B)).nnz),
        ("C(i,j) = A(i,j) * B(i,j)", dict(A=A, B=A * 2), A.multiply(A * 2), A.nnz),
        ("C(i,j) = A(i,j) * B(i,j)", dict(A=A, B=B), A.multiply(B), abs(A).multiply(abs(B)).nnz),
        (
            "C(i,j) = A(i,j) + B(i,j) + E(i,j)",
            dict(A=A, B=B, E=E),
            A + B + E,
            (abs(A) + abs(B) + abs(E)).nnz,
        ),
        ("C(i,j) = A(i,j) * D(i,j)", dict(A=A, D=D), A.multiply(D), A.nnz),
        ("C(i,j) = A(i,j) * M(i,k) * N(k,j)", dict(A=A, M=M, N=N), A.multiply(M @ N), A.nnz),
        ("C(i,j) = A(i,j) + B(i,j)", dict(A=A.tocoo(), B=B), A + B, (abs(A) + abs(B)).nnz),
    ]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("on_device", [False, True])
@pytest.mark.parametrize("case", range(7))
def test_sparse_results_on_the_gpu(case, on_device, index_dtype):
    expr, operands, expected, entries = sparse_result_cases()[case]
    given = {}
    for name, value in operands.items():
        if sp.issparse(value):
            value = csr_with_index(value, index_dtype) if value.format == "csr" else value
        tensor = ct.asarray(value)
        given[name] = tensor.to("cuda") if on_device else tensor
    C = ct.evaluate(expr, **given, out_format="csr", target="cuda")
    assert C.device == ("cuda" if on_device else "cpu")
    got = C.to_scipy()
    got.check_format(full_check=True)
    assert got.has_sorted_indices and got.nnz == entries
    np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_results_keeping_an_operands_pattern_on_the_gpu(fmt):
    # (docs/compiler.md, "Results that keep an operand's pattern") stored at A's positions in
    # one pass, by A's nonzeros split evenly; on the device, sharing A's index arrays there.
    A = sparse(400, 300, 0.03, skew=True)
    M, N = rng.standard_normal((400, 9)), rng.standard_normal((9, 300))
    expected = A.multiply(M @ N).toarray()
    dA = ct.asarray(A, format=fmt).to("cuda")
    S = ct.evaluate(
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)", A=dA, M=M, N=N, out_format=fmt, target="cuda"
    )
    assert S.device == "cuda" and S.nnz == A.nnz
    np.testing.assert_allclose(S.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    T = ct.evaluate(
        "T(i,j) = S(i,j) * x(j)", S=S, x=np.arange(300.0), out_format=fmt, target="cuda"
    )
    assert T.device == "cuda" and T.nnz == A.nnz
    np.testing.assert_allclose(T.to_numpy(), expected * np.arange(300.0), rtol=1e-12, atol=1e-12)
    # Host operands: the result comes back with index arrays of its own
    H = ct.evaluate(
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)", A=A, M=M, N=N, out_format="csr", target="cuda"
    )
    assert H.device == "cpu" and not np.shares_memory(H.to_scipy().indices, A.indices)
    np.testing.assert_allclose(H.to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_sparse_results_stay_on_the_gpu_and_chain():
    A, B = sparse(500, 400, 0.03), sparse(500, 400, 0.03)
    x = rng.standard_normal(400)
    dA, dB = ct.asarray(A).to("cuda"), ct.asarray(B).to("cuda")
    C = ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=dA, B=dB, out_format="csr", target="cuda")
    assert C.device == "cuda"
    y = ct.evaluate("y(i) = C(i,j) * x(j)", C=C, x=x, target="cuda")
    assert y.device == "cuda"
    np.testing.assert_allclose(y.to_numpy(), (A + B) @ x, rtol=1e-12)
    cp = pytest.importorskip("cupy")
    gC = ct.cuda.to_cupy(C)
    np.testing.assert_allclose(cp.asnumpy(gC @ cp.asarray(x)), (A + B) @ x, rtol=1e-12)


def test_sparse_results_of_many_rows_and_none():
    """More rows than one block of the offsets kernels holds (several rounds of block sums), and
    a product of disjoint patterns, which has no entries at all."""
    rows = 700_000
    r = np.random.default_rng(3)
    A = sp.csr_matrix(
        (r.standard_normal(3 * rows), r.integers(0, 900, 3 * rows), np.arange(0, 3 * rows + 1, 3)),
        shape=(rows, 900),
    )
    A.sum_duplicates()
    B = sparse(rows, 900, 0.002)
    C = ct.evaluate(
        "C(i,j) = A(i,j) + B(i,j)", A=A, B=B, out_format="csr", target="cuda"
    ).to_scipy()
    assert C.nnz == (abs(A) + abs(B)).nnz
    assert abs(C - (A + B)).max() <= 1e-12
    upper = sp.csr_matrix(np.triu(np.ones((64, 64)), 1))
    lower = sp.csr_matrix(np.tril(np.ones((64, 64)), -1))
    C = ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=upper, B=lower, out_format="csr", target="cuda")
    assert C.to_scipy().nnz == 0 and not C.to_scipy().indptr.any()


@pytest.mark.parametrize("trial", range(8))
def test_random_sparse_results_match_einsum(trial):
    r = np.random.default_rng(50 + trial)
    cases = [
        "C(i,j) = A(i,j) + B(i,j)",
        "C(i,j) = A(i,j) * B(i,j)",
        "C(i,j) = A(i,j) * B(i,j) + A(i,j)",
        "C(i,j) = (A(i,j) + B(i,j)) * D(i,j)",
    ]
    expr = cases[trial % len(cases)]
    fa, fb = (str(f) for f in r.choice(["csr", "dense", "coo", "dcsr"], 2))
    A = ct.random((41, 29), density=0.2, format=fa, seed=trial)
    B = ct.random((41, 29), density=0.2, format=fb, seed=200 + trial)
    D = r.standard_normal((41, 29))
    given = {"A": A, "B": B, "D": D}
    operands = {n: v for n, v in given.items() if f"{n}(" in expr.split("=", 1)[1]}
    got = ct.evaluate(expr, target="cuda", out_format="csr", **operands).to_numpy()
    a, b = A.to_numpy(), B.to_numpy()
    expected = {0: a + b, 1: a * b, 2: a * b + a, 3: (a + b) * D}[trial % len(cases)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=f"{expr} {fa} {fb}")


def test_cupy_views_share_memory():
    cp = pytest.importorskip("cupy")
    A = sparse(60, 50, 0.1)
    x = rng.standard_normal(50)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=ct.asarray(A).to("cuda"), x=x, target="cuda")
    assert y.device == "cuda"
    gy = cp.asarray(y)  # __cuda_array_interface__
    np.testing.assert_allclose(cp.asnumpy(gy), A @ x, rtol=1e-12)
    gA = ct.cuda.to_cupy(ct.asarray(A).to("cuda"))
    np.testing.assert_allclose(cp.asnumpy(gA @ cp.asarray(x)), A @ x, rtol=1e-12)
    assert ct.cuda.to_cupy(y).data.ptr == gy.data.ptr


# -- CuPy memory taken in without copying (coiter/interop_cupy.py) -----------------------------


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_cupy_matrices_and_arrays_are_adopted_without_copying(fmt):
    cp = pytest.importorskip("cupy")
    cpsp = pytest.importorskip("cupyx.scipy.sparse")
    A = sparse(300, 200, 0.05, fmt, skew=True)
    if fmt == "coo":
        A.sum_duplicates()
    x = rng.standard_normal(200)
    gA = {"csr": cpsp.csr_matrix, "csc": cpsp.csc_matrix, "coo": cpsp.coo_matrix}[fmt](A)
    gx = cp.asarray(x)
    tA, tx = ct.asarray(gA), ct.asarray(gx)
    assert tA.device == tx.device == "cuda"
    assert tA.format == ct.asarray(A).format and tA.nnz == A.nnz
    # The same GPU memory, seen back through CuPy
    assert ct.cuda.to_cupy(tx).data.ptr == gx.data.ptr
    assert ct.cuda.to_cupy(tA).data.data.ptr == gA.data.data.ptr
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=tA, x=tx, target="cuda")
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, atol=1e-12)
    # CuPy objects passed straight to a kernel call, for the GPU and for the CPU (downloaded)
    for target in ("cuda", "cpu"):
        y = ct.evaluate("y(i) = A(i,j) * x(j)", A=gA, x=gx, target=target)
        np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, atol=1e-12)
    # A host read downloads the adopted arrays
    assert abs(tA.to_scipy() - A).max() == 0


def test_adopted_memory_outlives_the_cupy_objects():
    cp = pytest.importorskip("cupy")
    cpsp = pytest.importorskip("cupyx.scipy.sparse")
    import gc

    A = sparse(500, 400, 0.02)
    x = rng.standard_normal(400)
    tA, tx = ct.asarray(cpsp.csr_matrix(A)), ct.asarray(cp.asarray(x))
    gc.collect()
    cp.get_default_memory_pool().free_all_blocks()  # would hand the memory back if unowned
    filler = cp.full(10**6, 7.0)  # noqa: F841  (reuses freed memory, if any was freed)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=tA, x=tx, target="cuda")
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, atol=1e-12)


def test_malformed_cupy_matrices_are_refused_or_repaired():
    cp = pytest.importorskip("cupy")
    cpsp = pytest.importorskip("cupyx.scipy.sparse")
    A = sparse(50, 40, 0.1)
    x = rng.standard_normal(40)

    def gpu_csr(indices=None, indptr=None):
        return cpsp.csr_matrix(
            (
                cp.asarray(A.data),
                cp.asarray(A.indices if indices is None else indices),
                cp.asarray(A.indptr if indptr is None else indptr),
            ),
            shape=A.shape,
        )

    out_of_range = A.indices.copy()
    out_of_range[3] = 40
    with pytest.raises(ct.FormatError, match=r"outside \[0, 40\)"):
        ct.asarray(gpu_csr(indices=out_of_range))
    descending = A.indptr.copy()
    descending[10] = descending[9] - 1
    with pytest.raises(ct.FormatError, match="indptr decreases"):
        ct.evaluate("y(i) = A(i,j) * x(j)", A=gpu_csr(indptr=descending), x=x, target="cuda")
    # Unsorted rows: sorted in a copy on the GPU, or refused when no copy is allowed
    U = A.copy()
    for r in range(U.shape[0]):
        row = slice(U.indptr[r], U.indptr[r + 1])
        U.indices[row], U.data[row] = U.indices[row][::-1].copy(), U.data[row][::-1].copy()
    gU = cpsp.csr_matrix(
        (cp.asarray(U.data), cp.asarray(U.indices), cp.asarray(U.indptr)), shape=U.shape
    )
    with pytest.raises(ct.FormatError, match="not sorted"):
        ct.asarray(gU, copy=False)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=gU, x=x, target="cuda")
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12, atol=1e-12)


def test_gpu_interfaces_that_lie_are_refused():
    cp = pytest.importorskip("cupy")

    class Claims:
        def __init__(self, interface):
            self.interface = interface

        @property
        def __cuda_array_interface__(self):
            return self.interface

    small = cp.arange(1000, dtype=cp.float64)
    interface = dict(small.__cuda_array_interface__)
    interface["shape"] = (10**9,)  # far past its allocation
    with pytest.raises(ct.DeviceError, match="past the end of its allocation"):
        ct.asarray(Claims(interface))
    host = np.arange(10.0)
    with pytest.raises(ct.DeviceError, match="not GPU memory"):
        ct.asarray(
            Claims(
                {"shape": (10,), "typestr": "<f8", "data": (host.ctypes.data, False), "version": 3}
            )
        )


def test_cupy_conversions_copy_on_the_gpu():
    cp = pytest.importorskip("cupy")
    x = cp.arange(20, dtype=cp.float32)
    strided = x[::2]  # not contiguous
    with pytest.raises(ValueError, match="copy=False"):
        ct.asarray(strided, copy=False)
    t = ct.asarray(strided, dtype=np.float64)
    assert t.device == "cuda" and t.dtype == np.float64
    np.testing.assert_array_equal(t.to_numpy(), np.arange(0, 20, 2, dtype=np.float64))
    M = cp.arange(12, dtype=cp.float64).reshape(3, 4)
    T = ct.asarray(M, format="csr")  # another format: through the host, back on the GPU
    assert T.device == "cuda" and T.format == ct.asarray(np.ones((3, 4)), format="csr").format
    np.testing.assert_array_equal(T.to_numpy(), cp.asnumpy(M))
    with cp.cuda.Stream(non_blocking=True):  # the producer's stream is waited for
        z = cp.arange(1 << 20, dtype=cp.float64) * 3
        tz = ct.asarray(z)
    np.testing.assert_array_equal(tz.to_numpy(), np.arange(1 << 20, dtype=np.float64) * 3)
