"""A CG solve with coiter doing the matrix-vector products against SciPy's own CG on the same
matrix, default settings (coiter's and NumPy's thread counts as they come). The solves run
alternately in pairs, so that a busy machine slows both alike; each solve runs a fixed number
of iterations (``maxiter``, tolerance 0), so both do the same work. Reports SciPy's time /
coiter's per pair, median (> 1 when coiter is faster), and the load average.

    python -m benchmarks.cg_solve [--pairs 7] [--iterations 50] [--sizes 1e4 1e5 1e6]
                                  [--blas-threads 1]

Matrices: the 2-D Poisson matrix (5-point stencil, about 5 nonzeros a row) and a random SPD
matrix (a random symmetric pattern with about 10 nonzeros a row, made diagonally dominant).
coiter runs as users would write it: ``cg(T, b)`` with ``T = ct.asarray(M)`` (its ``matvec``)
and ``cg(aslinearoperator(T), b)``. ``--blas-threads N`` limits OpenBLAS (the vector operations
of both peers alike) with threadpoolctl: on a busy machine OpenBLAS's own threads can take most
of a solve's time, and this separates them from the SpMVs. Used for issue 17 item 6
(docs/arrays.md, "Threads")."""

import argparse
import os
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import coiter as ct


def poisson_2d(rows: int) -> sp.csr_array:
    side = int(round(rows**0.5))
    line = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(side, side))
    eye = sp.eye_array(side)
    return (sp.kron(eye, line) + sp.kron(line, eye)).tocsr()


def random_spd(rows: int, rng: np.random.Generator, per_row: int = 10) -> sp.csr_array:
    half = per_row // 2
    r = np.repeat(np.arange(rows), half)
    c = rng.integers(0, rows, r.size)
    upper = sp.coo_array((rng.random(r.size), (r, c)), shape=(rows, rows))
    symmetric = (upper + upper.T).tocsr()
    # Row sums bound every eigenvalue's distance from the diagonal (Gershgorin): SPD.
    diagonal = np.asarray(abs(symmetric).sum(axis=1)).ravel() + 1.0
    return (symmetric + sp.diags_array(diagonal)).tocsr()


def canonical(M: sp.csr_array) -> sp.csr_array:
    M.sum_duplicates()
    M.sort_indices()
    return M


def cg_seconds(operator, b: np.ndarray, iterations: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    x, _ = spla.cg(operator, b, rtol=0.0, atol=0.0, maxiter=iterations)
    return time.perf_counter() - start, x


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="OpenBLAS's threads (default: as they come)"
    )
    args = parser.parse_args(argv)
    if args.blas_threads is None:
        run(args)
    else:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=args.blas_threads, user_api="blas"):
            run(args)


def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    print(
        f"coiter threads {ct.get_num_threads()}, OpenBLAS threads "
        f"{args.blas_threads or 'as they come'}, CPUs {os.cpu_count()}, "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )
    for rows in (int(s) for s in args.sizes):
        for name, M in (("Poisson 2-D", poisson_2d(rows)), ("random SPD", random_spd(rows, rng))):
            M = canonical(M)
            b = rng.random(M.shape[0])
            T = ct.asarray(M)
            spellings = {"cg(T)": T, "cg(aslinearoperator(T))": spla.aslinearoperator(T)}
            # Same iterations, same arithmetic: the iterates agree to rounding.
            _, want = cg_seconds(M, b, args.iterations)
            for spelling, operator in spellings.items():
                _, got = cg_seconds(operator, b, args.iterations)
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9 * np.abs(want).max())
                ratios, coiter_s, scipy_s = [], [], []
                for _ in range(args.pairs):
                    c, _ = cg_seconds(operator, b, args.iterations)
                    s, _ = cg_seconds(M, b, args.iterations)
                    coiter_s.append(c)
                    scipy_s.append(s)
                    ratios.append(s / c)
                coiter_ms, scipy_ms = np.median(coiter_s) * 1e3, np.median(scipy_s) * 1e3
                print(
                    f"{name} {M.shape[0]:>9,} rows {M.nnz / 1e6:5.2f}M nonzeros {spelling:<24}: "
                    f"SciPy/coiter {np.median(ratios):.2f} (coiter {coiter_ms:.1f} ms, "
                    f"SciPy {scipy_ms:.1f} ms for {args.iterations} iterations)"
                )
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
