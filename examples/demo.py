"""A tour of coiter's data layer: formats, tensors, conversions and file I/O.

Run it with `bash scripts/demo.sh` (sets the machine up first) or, inside the virtual
environment, `python examples/demo.py`. Every result is checked against SciPy/NumPy.
"""
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct


def section(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def show_levels(name, tensor):
    print(f"{name}: shape={tensor.shape} dtype={tensor.dtype} format={tensor.format} "
          f"nnz={tensor.nnz}")
    for k, level in enumerate(tensor.levels):
        arrays = ", ".join(f"{key}={np.array2string(a, threshold=12)}"
                           for key, a in level.arrays.items())
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
print("shares memory with SciPy: values", np.shares_memory(A.values, M.data),
      " crd", np.shares_memory(A.levels[1].crd, M.indices),
      " pos", np.shares_memory(A.levels[1].pos, M.indptr))
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
        print(f"  (DIA nnz counts the zeros on its diagonals, as SciPy's todia() does: "
              f"{M.todia().nnz})")
csc_T = A.asformat("csc")
assert csc_T.format == csc
S = csc_T.to_scipy()
assert S.format == "csc" and np.array_equal(S.toarray(), reference)
assert np.array_equal(csc_T.levels[1].pos, M.tocsc().indptr)
coo_coords, coo_values = A.asformat("coo").coords()
assert np.array_equal(sp.coo_array((coo_values, coo_coords.T), shape=M.shape).toarray(),
                      reference)
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

print("\nAll demo checks passed.")
