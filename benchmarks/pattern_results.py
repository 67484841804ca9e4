"""Sparse results that keep an operand's pattern (docs/compiler.md, "Results that keep an
operand's pattern"): a CSR matrix scaled by a vector, ``T(i,j) = A(i,j) * x(j)``, against
SciPy's ``A.multiply(x)``, and SDDMM, ``S(i,j) = A(i,j) * M(i,k) * N(k,j)`` of rank 16, against
its NumPy spelling (the rows of M and columns of N that A's entries pick, multiplied and
summed), on uniform rows and on power-law rows (200,000 rows, 16 entries a row on average),
SciPy matrices passed as they are. Prints medians of 9 calls (SDDMM: 5) after one warm-up:

    python -m benchmarks.pattern_results [--threads N]
"""

import argparse

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .timing import median_of

ROWS = 200_000


def uniform(rng):
    indptr = np.arange(0, 16 * ROWS + 1, 16)
    indices = np.sort(rng.integers(0, ROWS, (ROWS, 16)), axis=1).ravel()
    A = sp.csr_matrix((rng.random(16 * ROWS), indices, indptr), shape=(ROWS, ROWS))
    A.sum_duplicates()
    return A


def power_law(rng):
    lengths = np.minimum((rng.pareto(1.2, ROWS) * 4 + 1).astype(np.int64), ROWS // 4)
    lengths = (lengths * (16 * ROWS / lengths.sum())).astype(np.int64) + 1
    rows = np.repeat(np.arange(ROWS), lengths)
    cols = rng.integers(0, ROWS, rows.size)
    A = sp.csr_matrix((rng.random(rows.size), (rows, cols)), shape=(ROWS, ROWS))
    A.sum_duplicates()
    return A


def median_ms(call, repeats=9):
    """Median milliseconds of ``repeats`` calls after one warm-up (the suite's timing)."""
    return 1e3 * median_of(call, repeats).median


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    ct.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    scale = ct.compile("T(i,j) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "T": "csr"})
    sddmm = ct.compile(
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)",
        formats={"A": "csr", "M": "dd", "N": "dd", "S": "csr"},
    )
    for name, A in (("uniform", uniform(rng)), ("power-law", power_law(rng))):
        x, M, N = rng.random(ROWS), rng.random((ROWS, 16)), rng.random((16, ROWS))
        rows = np.repeat(np.arange(ROWS), np.diff(A.indptr))
        NT = np.ascontiguousarray(N.T)

        def numpy_sddmm(A=A, M=M, NT=NT, rows=rows):
            picked = np.einsum("ij,ij->i", M[rows], NT[A.indices])
            return sp.csr_matrix((A.data * picked, A.indices, A.indptr), shape=A.shape)

        times = {
            "scale coiter": median_ms(lambda A=A, x=x: scale(A=A, x=x)),
            "scale scipy": median_ms(lambda A=A, x=x: A.multiply(x).tocsr()),
            "sddmm coiter": median_ms(lambda A=A, M=M, N=N: sddmm(A=A, M=M, N=N), 5),
            "sddmm numpy": median_ms(numpy_sddmm, 5),
        }
        cells = " ".join(f"{k}={v:.2f}ms" for k, v in times.items())
        print(f"{name} ({A.nnz} nonzeros, {args.threads} threads): {cells}", flush=True)


if __name__ == "__main__":
    main()
