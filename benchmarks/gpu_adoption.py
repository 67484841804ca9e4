"""What taking CuPy's memory in costs (docs/gpu.md, "CuPy"): ``ct.asarray`` of a
``cupyx.scipy.sparse`` CSR matrix and of a CuPy vector (adopted without copying; the matrix's
indices checked on the GPU), and SpMV called with the CuPy objects as they are (adopted at
every call) against SpMV on tensors adopted once, with CuPy's own ``A @ x`` beside them. Run on
a machine with an NVIDIA GPU and CuPy:

    python -m benchmarks.gpu_adoption [--rows N] [--per-row K]

Each line is the mean of 20 calls after 3 warm-up calls, synchronized once at the end (these
are host-side costs, and the GPU queue hides the kernels' own time where calls overlap it), and
the whole list runs twice, so that two readings of each show the run's noise.
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp

import coiter as ct
from coiter.interop_cupy import compressed_problem


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--per-row", type=int, default=12)
    args = parser.parse_args()
    import cupy as cp
    import cupyx.scipy.sparse as cpsp

    rng = np.random.default_rng(0)
    n, k = args.rows, args.per_row
    indptr = np.arange(0, k * n + 1, k, dtype=np.int32)
    indices = np.sort(rng.integers(0, n, (n, k), dtype=np.int32), axis=1).ravel()
    A = sp.csr_matrix((rng.random(k * n), indices, indptr), shape=(n, n))
    A.sum_duplicates()
    gA, gx = cpsp.csr_matrix(A), cp.ones(n)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, target="cuda"
    )
    tA, tx = ct.asarray(gA), ct.asarray(gx)
    print(f"{ct.cuda.status()['name']}: {n} rows, {A.nnz} nonzeros", flush=True)
    cases = {
        "check of A's indices": lambda: compressed_problem(cp, gA.indptr, gA.indices, n, n),
        "ct.asarray(cupy csr)": lambda: ct.asarray(gA),
        "ct.asarray(cupy x)": lambda: ct.asarray(gx),
        "SpMV call, CuPy operands": lambda: kern(A=gA, x=gx),
        "SpMV call, adopted tensors": lambda: kern(A=tA, x=tx),
        "CuPy gA @ gx": lambda: gA @ gx,
    }
    for _ in range(2):
        for label, call in cases.items():
            for _ in range(3):
                call()
            cp.cuda.Device().synchronize()
            start = time.perf_counter()
            for _ in range(20):
                call()
            cp.cuda.Device().synchronize()
            print(f"{label}: {1e3 * (time.perf_counter() - start) / 20:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
