"""CSR SpMV against SciPy on matrices that do not flatter coiter, as users call it (SciPy
matrices passed straight to ``ct.einsum``), one thread, calls alternating in pairs so that a
busy machine slows both alike. Reports SciPy's time / coiter's per pair, median.

    python -m benchmarks.spmv_pairs [--pairs 30]

Used for the coordinate checks' cost (docs/compiler.md, "checked before it runs")."""

import argparse
import time

import numpy as np
import scipy.sparse as sp

import coiter as ct


def matrices(rng: np.random.Generator) -> dict[str, sp.csr_array]:
    def uniform(n: int, per_row: int) -> sp.csr_array:
        rows = np.repeat(np.arange(n), per_row)
        cols = rng.integers(0, n, rows.size)
        return sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n))

    def banded(n: int, per_row: int) -> sp.csr_array:
        rows = np.repeat(np.arange(n), per_row)
        cols = (rows + rng.integers(-2 * per_row, 2 * per_row, rows.size)) % n
        return sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n))

    def power_law(n: int, mean_per_row: int) -> sp.csr_array:
        # Row lengths from a Pareto tail (a few rows of thousands, most of a few), columns
        # uniform: a web or social graph's adjacency.
        lengths = (rng.pareto(1.5, n) + 1) * mean_per_row / 3
        rows = np.repeat(np.arange(n), np.minimum(lengths, n // 10).astype(np.int64))
        cols = rng.integers(0, n, rows.size)
        return sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n))

    def poisson(m: int) -> sp.csr_array:
        # The 5-point Laplacian on an m x m grid: rows of 5 (a CG solver's matrix).
        line = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
        grid = sp.kron(line, sp.eye_array(m)) + sp.kron(sp.eye_array(m), line)
        return sp.csr_array(grid)

    return {
        "uniform 200k x 20": uniform(200_000, 20),
        "banded 200k x 50": banded(200_000, 50),
        "banded 200k x 8": banded(200_000, 8),
        "5-point Poisson 450 x 450": poisson(450),
        "short rows 1M x 4": uniform(1_000_000, 4),
        "power-law rows 500k": power_law(500_000, 10),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args()
    ct.set_num_threads(1)
    rng = np.random.default_rng(0)
    for name, M in matrices(rng).items():
        M.sum_duplicates()
        M.sort_indices()
        x = rng.random(M.shape[1])
        np.testing.assert_allclose(ct.einsum("ij,j->i", M, x).to_numpy(), M @ x)
        coiter_s, scipy_s = [], []
        for _ in range(args.pairs):
            start = time.perf_counter()
            ct.einsum("ij,j->i", M, x)
            coiter_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            M @ x
            scipy_s.append(time.perf_counter() - start)
        ratio = np.median(np.array(scipy_s) / np.array(coiter_s))
        print(
            f"{name}: {M.nnz / 1e6:.1f}M nonzeros ({M.indices.dtype} indices), "
            f"SciPy/coiter {ratio:.2f} "
            f"(coiter {np.median(coiter_s) * 1e3:.2f} ms, SciPy {np.median(scipy_s) * 1e3:.2f} ms)"
        )


if __name__ == "__main__":
    main()
