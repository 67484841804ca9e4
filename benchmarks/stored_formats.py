"""SpMV on the stored formats with derived levels (DIA, ELL, BCSR), one thread, same run:

- DIA: coiter's kernel on a ``"dia"`` tensor against SciPy's ``dia_array @ x``;
- BCSR: coiter on ``ct.bcsr((b, b))`` for b = 2, 3, 4 against SciPy's ``bsr_array @ x``;
- ELL: coiter on ``"ell"`` against coiter on ``"csr"``, on rows of equal length.

Every result is checked against SciPy's before timing; calls are interleaved
(``timing.measure_interleaved``) and each ratio is the peer's median over coiter's.

    python -m benchmarks.stored_formats [--size N] [--output-dir DIR]
"""

import argparse
import pathlib
import sys

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .environment import environment, write_results
from .timing import RepeatPolicy, measure_interleaved, time_call

POLICY = RepeatPolicy(min_repeats=15, max_repeats=200, budget_s=2.0, cap_s=20.0)


def banded(n, half_width, rng):
    """An n×n matrix with the 2·half_width + 1 central diagonals full."""
    offsets = np.arange(-half_width, half_width + 1)
    data = rng.standard_normal((len(offsets), n))
    return sp.dia_array((data, offsets), shape=(n, n))


def block_sparse(n, block, blocks_per_row, rng):
    """An n×n matrix of dense block×block blocks, ``blocks_per_row`` random ones per block row."""
    rows = n // block
    cols = np.sort(
        np.stack([rng.choice(rows, blocks_per_row, replace=False) for _ in range(rows)]), axis=1
    )
    indptr = np.arange(0, rows * blocks_per_row + 1, blocks_per_row)
    data = rng.standard_normal((rows * blocks_per_row, block, block))
    return sp.bsr_array((data, cols.ravel(), indptr), shape=(n, n))


def regular_rows(n, per_row, rng):
    """An n×n CSR matrix with exactly ``per_row`` entries in every row."""
    cols = np.sort(np.stack([rng.choice(n, per_row, replace=False) for _ in range(n)]), axis=1)
    indptr = np.arange(0, n * per_row + 1, per_row)
    return sp.csr_array((rng.standard_normal(n * per_row), cols.ravel(), indptr), shape=(n, n))


def spmv_kernel(fmt):
    return ct.compile("y(i) = A(i,j) * x(j)", formats={"A": fmt, "x": "d", "y": "d"})


def _spmv_calls(kernel, A, x, scipy_matrix, scipy_x):
    """The SpMV calls to time: coiter's kernel on ``A`` and SciPy's product."""
    return {"coiter": lambda: kernel(A=A, x=x), "scipy": lambda: scipy_matrix @ scipy_x}


def compare(label, contenders, reference):
    """Checks every contender against ``reference``, times them interleaved, returns a row."""
    warmup = {}
    for name, fn in contenders.items():
        seconds, result = time_call(fn)
        got = np.asarray(result)
        if not np.allclose(got, reference, rtol=1e-10, atol=1e-10):
            raise AssertionError(f"{label}: {name} disagrees with SciPy")
        warmup[name] = seconds
    timings = measure_interleaved(contenders, POLICY, warmup, warmup_rounds=2)
    for t in timings.values():
        if isinstance(t, Exception):
            raise t
    return {name: t.as_dict() | {"runs": None} for name, t in timings.items()}


def run(size, seed=0):
    rng = np.random.default_rng(seed)
    ct.set_num_threads(1)
    x = rng.standard_normal(size)
    xt = ct.asarray(x)
    rows = []

    def record(label, peer_name, timings):
        coiter_s = timings["coiter"]["median"]
        peer_s = timings[peer_name]["median"]
        rows.append(
            {
                "case": label,
                "peer": peer_name,
                "coiter_s": coiter_s,
                "peer_s": peer_s,
                "speedup": peer_s / coiter_s,
                "timings": timings,
            }
        )
        print(
            f"{label:<34} coiter {coiter_s * 1e3:8.3f} ms   {peer_name} {peer_s * 1e3:8.3f} ms   "
            f"{peer_s / coiter_s:5.2f}x",
            flush=True,
        )

    dia = banded(size, 3, rng)
    A = ct.asarray(dia)
    kern = spmv_kernel(A.format)
    record(
        f"DIA SpMV ({size}, 7 diagonals)",
        "scipy",
        compare("dia", {"coiter": lambda: kern(A=A, x=xt), "scipy": lambda: dia @ x}, dia @ x),
    )

    n = size - size % 12
    xb = x[:n]
    xbt = ct.asarray(xb)
    for b in (2, 3, 4):
        bsr = block_sparse(n, b, max(1, 24 // b), rng)
        A = ct.asarray(bsr)
        kern = spmv_kernel(A.format)
        record(
            f"BCSR {b}x{b} SpMV ({n}, {bsr.nnz} nnz)",
            "scipy",
            compare(f"bcsr{b}", _spmv_calls(kern, A, xbt, bsr, xb), bsr @ xb),
        )

    csr = regular_rows(size, 8, rng)
    ell = ct.asarray(csr, format="ell")
    csr_t = ct.asarray(csr)
    kern_ell, kern_csr = spmv_kernel(ell.format), spmv_kernel(csr_t.format)
    record(
        f"ELL SpMV ({size}, 8 per row)",
        "coiter-csr",
        compare(
            "ell",
            {
                "coiter": lambda: kern_ell(A=ell, x=xt),
                "coiter-csr": lambda: kern_csr(A=csr_t, x=xt),
            },
            csr @ x,
        ),
    )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default=str(pathlib.Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    rows = run(args.size, args.seed)
    out = pathlib.Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_results(
        out / "stored-formats-1-thread.json", environment(threads=1, size=args.size, cases=rows)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
