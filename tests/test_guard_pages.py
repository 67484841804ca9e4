"""Kernels read their operands' arrays in place and never past their ends: each index and
value array is copied to the end of a page whose next page is unreadable, so a load one
element beyond the array (a merge's `p < end && crd[p] == c` evaluated without the guard,
say) kills the process instead of reading a neighbour's bytes unnoticed.

Each engine runs the cases in a child process, which prints one line per case; a crash
names the case it happened in.
"""

import signal
import subprocess
import sys
import textwrap

import pytest

GUARDED = r"""
import ctypes, numpy as np, scipy.sparse as sp, coiter as ct

libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.mprotect.restype = ctypes.c_int
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = 4096
PROT_NONE, PROT_RW, MAP_PRIVATE_ANONYMOUS = 0, 3, 0x22
kept = []  # the mappings live as long as the process

def guarded(array):
    # A copy of `array` whose last byte is the last byte before an unreadable page.
    size = max(array.nbytes, 1)
    pages = -(-size // PAGE) + 1
    base = libc.mmap(None, pages * PAGE, PROT_RW, MAP_PRIVATE_ANONYMOUS, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value)
    assert libc.mprotect(base + (pages - 1) * PAGE, PAGE, PROT_NONE) == 0
    start = base + (pages - 1) * PAGE - array.nbytes
    kept.append(base)
    copy = np.frombuffer((ctypes.c_char * array.nbytes).from_address(start), dtype=array.dtype)
    copy[:] = array
    return copy
"""

CHILD = (
    GUARDED
    + r"""
def guarded_csr(m):
    m = sp.csr_array(m)
    m.sum_duplicates()
    arrays = (guarded(m.data), guarded(m.indices.astype(np.int32)),
              guarded(m.indptr.astype(np.int32)))
    return sp.csr_array(arrays, shape=m.shape)

def guarded_coo(m):
    m = sp.coo_array(sp.csr_array(m))
    out = sp.coo_array((guarded(m.data), (guarded(m.row.astype(np.int32)),
                                          guarded(m.col.astype(np.int32)))), shape=m.shape)
    out.has_canonical_format = True
    return out

def in_place(tensor, array):
    return any(np.shares_memory(a, array) for level in tensor.levels for a in level.arrays.values())

rng = np.random.default_rng(7)
A0 = sp.random_array((60, 50), density=0.25, format="csr", rng=rng)
A0.data += 0.5
half = A0.copy(); half.data = rng.random(half.nnz) + 0.5
keep = rng.random(A0.nnz) < 0.5
half = sp.csr_array((np.r_[A0.data[keep], rng.random((~keep).sum()) + 0.5],
                     (np.r_[A0.tocoo().row[keep], A0.tocoo().row[~keep]],
                      np.r_[A0.indices[keep], (A0.indices[~keep] + 2) % 50])), shape=A0.shape)
same = sp.csr_array((rng.random(A0.nnz) + 0.5, A0.indices.copy(), A0.indptr.copy()), shape=A0.shape)
square = sp.random_array((50, 50), density=0.3, format="csr", rng=rng) + sp.eye_array(50)
x = guarded(rng.random(50))

# Rows whose columns lie far apart prefetch what they gather 32 entries ahead, reading the
# coordinate there (ir/guard_coordinates.cpp): all rows (most rows far: the far rows' loop),
# and the last block only (the blocks' prefetching copy); both end at the guard page.
wide = 200_000
far_rows = np.repeat(np.arange(300), 4)
far_cols = rng.integers(0, wide, far_rows.size)
Far0 = sp.csr_array((rng.random(far_rows.size), (far_rows, far_cols)), shape=(300, wide))
close_cols = np.where(far_rows < 288, rng.integers(0, 300, far_rows.size), far_cols)
FarBlock0 = sp.csr_array((rng.random(far_rows.size), (far_rows, close_cols)), shape=(300, wide))
xw = guarded(rng.random(wide))

A, S, H, Q, Far, FarBlock = (guarded_csr(m) for m in (A0, same, half, square, Far0, FarBlock0))
Qt = guarded_csr(square.T)
Ac = guarded_coo(A0)
assert in_place(ct.asarray(A), A.indices) and in_place(ct.asarray(Ac), Ac.col)

ADD, MUL = "C(i,j) = A(i,j) + B(i,j)", "C(i,j) = A(i,j) * B(i,j)"
CASES = [  # name, expression, operands, SciPy's result
    ("spmv", "y(i) = A(i,j) * x(j)", dict(A=A, x=x), A0 @ x),
    ("spmv_coo", "y(i) = A(i,j) * x(j)", dict(A=Ac, x=x), A0 @ x),
    ("spmv_far_rows", "y(i) = A(i,j) * x(j)", dict(A=Far, x=xw), Far0 @ xw),
    ("spmv_far_block", "y(i) = A(i,j) * x(j)", dict(A=FarBlock, x=xw), FarBlock0 @ xw),
    ("add_same_pattern", ADD, dict(A=A, B=S), A0 + same),
    ("mul_same_pattern", MUL, dict(A=A, B=S), A0 * same),
    ("add_half", ADD, dict(A=A, B=H), A0 + half),
    ("mul_half", MUL, dict(A=A, B=H), A0 * half),
    ("add3", "C(i,j) = A(i,j) + B(i,j) + D(i,j)", dict(A=A, B=S, D=H), A0 + same + half),
    ("add_transpose", ADD, dict(A=Q, B=Qt), square + square.T),
    ("mul_transpose", MUL, dict(A=Q, B=Qt), square * square.T),
    ("add_coo", ADD, dict(A=Ac, B=H), A0 + half),
    ("spgemm", "C(i,j) = A(i,k) * B(k,j)", dict(A=A, B=Q), A0 @ square),
    ("inner", "C(i,j) = A(i,k) * B(j,k)", dict(A=A, B=H), A0 @ half.T),
    ("dot_rows", "y(i) = A(i,j) * B(i,j)", dict(A=A, B=H), (A0 * half).sum(axis=1)),
]

ct.set_num_threads({threads})
for name, expression, operands, reference in CASES:
    got = ct.evaluate(expression, engine={engine!r}, **operands).to_numpy()
    want = reference.toarray() if hasattr(reference, "toarray") else np.asarray(reference)
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
    print(f"{{name}}: ok", flush=True)
print("done", flush=True)
"""
)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("engine", ["llvm", "c"])
def test_kernels_never_read_past_their_operands(engine, threads):
    source = textwrap.dedent(CHILD.format(threads=threads, engine=engine))
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=300)
    done = [line.split(":")[0] for line in r.stdout.splitlines() if line.endswith(": ok")]
    assert r.returncode == 0, (
        f"child died (status {r.returncode}) after {done[-1:]}: {r.stderr[-2000:]}"
    )
    assert "done" in r.stdout


def test_a_read_past_a_guarded_array_kills_the_child():
    # What the test above relies on: the page after a guarded array cannot be read.
    source = textwrap.dedent(GUARDED) + textwrap.dedent("""
        a = guarded(np.arange(10, dtype=np.int32))
        print(ctypes.c_int32.from_address(a.ctypes.data + a.nbytes - 4).value, flush=True)
        print(ctypes.c_int32.from_address(a.ctypes.data + a.nbytes).value, flush=True)
    """)
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["9"] and r.returncode == -signal.SIGSEGV
