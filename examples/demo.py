"""A tour of coiter: the data layer (formats, tensors, conversions, file I/O), then the
compiler (SpMV, SpGEMM, SDDMM and MTTKRP compiled to fused kernels, with their generated C).

Run it with `bash scripts/demo.sh` (sets the machine up first) or, inside the virtual
environment, `python examples/demo.py`. Every result is checked against SciPy/NumPy, and
each kernel is timed next to the SciPy/NumPy code that computes the same thing.
"""

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct


def section(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def show_levels(name, tensor):
    print(
        f"{name}: shape={tensor.shape} dtype={tensor.dtype} format={tensor.format} nnz={tensor.nnz}"
    )
    for k, level in enumerate(tensor.levels):
        arrays = ", ".join(
            f"{key}={np.array2string(a, threshold=12)}" for key, a in level.arrays.items()
        )
        print(f"  level {k}: {level.type}" + (f"  {arrays}" if arrays else ""))
    print(f"  values = {np.array2string(tensor.values, precision=2, threshold=12)}")


# A small sparse matrix (6 x 8, 14 nonzeros) and a dense one, as SciPy and NumPy give them.
rng = np.random.default_rng(42)
M = sp.random_array((6, 8), density=0.3, format="csr", random_state=rng)
dense = rng.standard_normal((3, 4))

section("Formats")
csr = ct.Format([ct.dense, ct.compressed])
csc = ct.Format([ct.dense, ct.compressed], mode_order=(1, 0))
print("CSR:", csr, "  CSC:", csc, "  parsed 'ds:1,0':", ct.Format.parse("ds:1,0"))
print("BCSR 2x2:", ct.bcsr((2, 2)), "levels:", ct.bcsr((2, 2)).levels)
assert ct.Format.parse("ds:1,0") == csc
assert len(ct.bcsr((2, 2)).levels) == 4 and ct.bcsr((2, 2)).order == 2

section("Tensors from SciPy and NumPy (zero copy)")
A = ct.asarray(M)  # canonical SciPy CSR -> CSR tensor, sharing SciPy's arrays
show_levels("A", A)
print(
    "shares memory with SciPy: values",
    np.shares_memory(A.values, M.data),
    " crd",
    np.shares_memory(A.levels[1].crd, M.indices),
    " pos",
    np.shares_memory(A.levels[1].pos, M.indptr),
)
assert A.format == csr and A.shape == M.shape and A.nnz == M.nnz
assert np.shares_memory(A.values, M.data) and np.shares_memory(A.levels[1].crd, M.indices)
assert np.array_equal(A.levels[1].pos, M.indptr) and np.array_equal(A.levels[1].crd, M.indices)
assert np.array_equal(A.to_numpy(), M.toarray())

D = ct.asarray(dense)  # C-contiguous NumPy array -> all-dense tensor, zero copy
show_levels("D", D)
print("shares memory with NumPy:", np.shares_memory(np.asarray(D), dense))
assert np.shares_memory(np.asarray(D), dense) and np.array_equal(np.asarray(D), dense)
assert np.array_equal(D.to_numpy(), dense)
i, j = map(int, A.coords()[0][3])
print(f"A[{i}, {j}] = {A[i, j]:.4f}  (SciPy: {M[i, j]:.4f});  A[0, 0] = {A[0, 0]}")
assert A[i, j] == M[i, j] and A[0, 0] == M.toarray()[0, 0]

section("Converting between formats")
reference = M.toarray()
T = A
for target in ["csc", "coo", "dia", "ell", ct.bcsr((2, 2))]:
    T = T.asformat(target)  # each step converts the previous result
    show_levels(f"-> {target}", T)
    assert np.array_equal(T.to_numpy(), reference), target
    if target == "dia":
        # DIA stores whole diagonals, zeros included, and counts them as SciPy does; the
        # formats converted from it below keep those explicit zeros as stored entries.
        assert T.nnz == M.todia().nnz
        print(
            f"  (DIA nnz counts the zeros on its diagonals, as SciPy's todia() does: "
            f"{M.todia().nnz})"
        )
csc_T = A.asformat("csc")
assert csc_T.format == csc
S = csc_T.to_scipy()
assert S.format == "csc" and np.array_equal(S.toarray(), reference)
assert np.array_equal(csc_T.levels[1].pos, M.tocsc().indptr)
coo_coords, coo_values = A.asformat("coo").coords()
assert np.array_equal(sp.coo_array((coo_values, coo_coords.T), shape=M.shape).toarray(), reference)
print("each format holds the same matrix as SciPy: ok")

section("A hashed level (unordered, locate + insert)")
H = A.asformat(ct.Format([ct.dense, ct.hashed(buckets=8)]))
print(H.format)
print("level 1 crd: one 8-bucket table per row, -1 = empty slot")
for row, table in enumerate(H.levels[1].crd.reshape(M.shape[0], -1)):
    print(f"  row {row}: {table}")
assert H.nnz == M.nnz and np.array_equal(H.to_numpy(), reference)
assert H[i, j] == M[i, j]

section("Matrix Market and .npz files")
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "A.mtx"
    ct.write(path, A)
    print(path.read_text().splitlines()[0], f"... ({len(path.read_text().splitlines())} lines)")
    B = ct.read(path)
    print("read back:", B)
    assert B.shape == M.shape and np.allclose(B.to_numpy(), reference)
    import scipy.io

    assert np.allclose(scipy.io.mmread(path).toarray(), reference)  # SciPy reads our file
    ct.write(Path(tmp) / "A.npz", A)
    C = ct.read(Path(tmp) / "A.npz")
    assert C.format == A.format and np.array_equal(C.to_numpy(), reference)
    print("round trips through .mtx and .npz: ok")

# ---------------------------------------------------------------------------------------------
# The compiler: index notation -> one fused kernel per expression and set of formats.


def per_call(fn, repeats=5):
    """Median seconds per call of fn, after one untimed call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def show_source(kern, max_lines=None):
    """Print the kernel's C; a long one from its first loop on, cut after max_lines lines."""
    lines = kern.source("c").rstrip().splitlines()
    print("generated C:")
    if max_lines is None or len(lines) <= max_lines:
        shown = lines
    else:
        header = next(n for n, line in enumerate(lines) if line.startswith("int32_t "))
        body = next(n for n, line in enumerate(lines) if line.lstrip().startswith("for ("))
        shown = (
            lines[header : header + 1]
            + [f"  ... ({body - header - 1} lines: arguments, allocations)"]
            + lines[body : body + max_lines]
        )
    for line in shown:
        print("    " + line)
    if len(lines) > len(shown):
        print(f"    ... (kern.source('c') has all {len(lines)} lines)")


def compare(label, kern_fn, ref_fn, error):
    ours, theirs = per_call(kern_fn), per_call(ref_fn)
    print(f"max abs error vs {label}: {error:.2e}")
    print(
        f"time per call: coiter {ours * 1e3:.2f} ms, {label} {theirs * 1e3:.2f} ms "
        f"(ratio {ours / theirs:.2f})"
    )


def canonical(csr):
    """SciPy CSR with sorted indices, for an exact structural comparison."""
    csr = csr.tocsr()
    csr.sum_duplicates()
    return csr


def same_csr(ours, ref):
    ours, ref = ours.to_scipy(), canonical(ref)
    assert ours.has_sorted_indices and np.array_equal(ours.indptr, ref.indptr)
    assert np.array_equal(ours.indices, ref.indices)
    return float(np.max(np.abs(ours.data - ref.data), initial=0.0))


section("Compiling SpMV: y(i) = A(i,j) * x(j)")
print(
    f"kernels are compiled with the {ct.compiler.default_engine()} engine; "
    "ct.cache_info() counts compiles and cache hits"
)
n = 100_000
Ms = sp.random_array((n, n), density=1e-4, format="csr", random_state=rng)  # 1 M nonzeros
xs = rng.standard_normal(n)
start = time.perf_counter()
spmv = ct.compile(
    "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, dtype=np.float64
)
print(
    f"ct.compile: {(time.perf_counter() - start) * 1e3:.1f} ms "
    "(from the disk cache when an earlier run compiled it)"
)
print("concrete index notation:", spmv.concrete)
show_source(spmv)
As, Xs = ct.asarray(Ms), ct.asarray(xs)
y = spmv(A=As, x=Xs)
err = float(np.max(np.abs(np.asarray(y) - Ms @ xs)))
assert np.allclose(np.asarray(y), Ms @ xs)
print(f"A: {n:,} x {n:,}, {Ms.nnz:,} nonzeros")
compare("SciPy A @ x", lambda: spmv(A=As, x=Xs), lambda: Ms @ xs, err)
again = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
print("compiling it again hits the in-memory cache:", ct.cache_info())
assert np.allclose(np.asarray(again(A=As, x=Xs)), np.asarray(y))

# The same kernel from index notation on tensors: y[i] = A[i, j] * x[j].
i, j = ct.indices("i j")
y2 = ct.zeros((n,), "dense")
y2[i] = As[i, j] * Xs[j]
assert np.allclose(np.asarray(y2), Ms @ xs)
print("y[i] = A[i, j] * x[j] with ct.indices gives the same result: ok")

section("SpGEMM: C(i,j) = A(i,k) * B(k,j), CSR result")
m = 20_000
P = sp.random_array((m, m), density=5e-4, format="csr", random_state=rng)  # 10 per row
Q = sp.random_array((m, m), density=5e-4, format="csr", random_state=rng)
spgemm = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"})
print("concrete index notation:", spgemm.concrete)
show_source(spgemm, max_lines=45)
Pt, Qt = ct.asarray(P), ct.asarray(Q)
C = spgemm(A=Pt, B=Qt)
print(
    f"A, B: {m:,} x {m:,}, {P.nnz:,} and {Q.nnz:,} nonzeros -> C: {C.format}, "
    f"{C.nnz:,} nonzeros (SciPy: {canonical(P @ Q).nnz:,})"
)
err = same_csr(C, P @ Q)
compare("SciPy A @ B", lambda: spgemm(A=Pt, B=Qt), lambda: P @ Q, err)
print(
    "(coiter's CSR result has sorted rows; SciPy's A @ B leaves each row's column indices unsorted)"
)

section("SDDMM: A(i,j) = B(i,j) * C(i,k) * D(k,j)")
rows, cols, rank = 20_000, 10_000, 32
S = sp.random_array((rows, cols), density=1e-3, format="csr", random_state=rng)
U = rng.standard_normal((rows, rank))
V = rng.standard_normal((rank, cols))
sddmm = ct.compile(
    "A(i,j) = B(i,j) * C(i,k) * D(k,j)", formats={"B": "csr", "C": "dd", "D": "dd", "A": "csr"}
)
print("concrete index notation:", sddmm.concrete)
show_source(sddmm, max_lines=12)
St, Ut, Vt = ct.asarray(S), ct.asarray(U), ct.asarray(V)
R = sddmm(B=St, C=Ut, D=Vt)


def sddmm_numpy():
    # Only the needed dot products: one per stored entry of B (no dense C @ D).
    r = np.repeat(np.arange(rows), np.diff(S.indptr))
    vals = S.data * np.einsum("pk,pk->p", U[r], V[:, S.indices].T)
    return sp.csr_array((vals, S.indices, S.indptr), shape=S.shape)


print(f"B: {rows:,} x {cols:,}, {S.nnz:,} nonzeros; C, D dense with k = {rank}")
err = same_csr(R, sddmm_numpy())
compare("NumPy (gather + einsum)", lambda: sddmm(B=St, C=Ut, D=Vt), sddmm_numpy, err)

section("MTTKRP: A(i,j) = B(i,k,l) * C(k,j) * D(l,j)")
shape3, rank = (200, 300, 400), 16
T = ct.random(shape3, density=0.005, format="csf", seed=7)  # 120,000 nonzeros
Ck = rng.standard_normal((shape3[1], rank))
Dl = rng.standard_normal((shape3[2], rank))
mttkrp = ct.compile(
    "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", formats={"B": "csf", "C": "dd", "D": "dd", "A": "dd"}
)
print("concrete index notation:", mttkrp.concrete)
show_source(mttkrp, max_lines=20)
Ct, Dt = ct.asarray(Ck), ct.asarray(Dl)
out = mttkrp(B=T, C=Ct, D=Dt)
coords, values = T.coords()
# SciPy/NumPy: the mode-1 unfolding of B (I x K*L, sparse) times the Khatri-Rao product of C, D.
unfolded = sp.csr_array(
    (values, (coords[:, 0], coords[:, 1] * shape3[2] + coords[:, 2])),
    shape=(shape3[0], shape3[1] * shape3[2]),
)


def mttkrp_scipy():
    khatri_rao = (Ck[:, None, :] * Dl[None, :, :]).reshape(-1, rank)
    return unfolded @ khatri_rao


ref = mttkrp_scipy()
dense_ref = np.einsum("ikl,kj,lj->ij", T.to_numpy(), Ck, Dl)
assert np.allclose(ref, dense_ref) and np.allclose(np.asarray(out), ref)
print(
    f"B: {shape3[0]} x {shape3[1]} x {shape3[2]} ({T.format}), {T.nnz:,} nonzeros; "
    f"C, D dense with j = {rank}"
)
compare(
    "SciPy (unfolding @ Khatri-Rao)",
    lambda: mttkrp(B=T, C=Ct, D=Dt),
    mttkrp_scipy,
    float(np.max(np.abs(np.asarray(out) - ref))),
)

info = ct.cache_info()
print(
    f"\nkernel cache: {info['compiles']} compiled, {info['disk_hits']} loaded from disk, "
    f"{info['hits']} in-memory hits, {info['compile_seconds'] * 1e3:.0f} ms building code"
)

print("\nAll demo checks passed.")
