"""Hashed (``dh``) results built in one pass against the compress-then-pack path they replace
(the kernel computes ``ds`` and ``asformat("dh")`` packs it), one thread, calls alternating in
pairs so that a busy machine slows both alike. Reports old time / one-pass time per pair,
median; then the cost of reruns on skewed rows (a kernel whose last result had small tables
reruns with doubled tables until its fullest row fits).

    python -m benchmarks.hashed_results [--pairs 15]

Cited by docs/compiler.md ("Result formats the compiler assembles")."""

import argparse
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

import coiter as ct


def int32_indices(m: sp.csr_array) -> sp.csr_array:
    """``m`` with int32 index arrays: operands of one index width share a kernel (each width
    is its own, with its own last result)."""
    m.sum_duplicates()
    indices, indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    return sp.csr_array((m.data, indices, indptr), shape=m.shape)


def uniform(rng: np.random.Generator, n: int, per_row: int) -> sp.csr_array:
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, n, rows.size)
    return int32_indices(sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n)))


def paired(
    first: Callable[[], object], second: Callable[[], object], pairs: int
) -> tuple[float, float, float]:
    """Median of second's time / first's time over alternating pairs, and both medians (s)."""
    a, b = [], []
    for _ in range(pairs):
        start = time.perf_counter()
        first()
        a.append(time.perf_counter() - start)
        start = time.perf_counter()
        second()
        b.append(time.perf_counter() - start)
    return float(np.median(np.array(b) / np.array(a))), float(np.median(a)), float(np.median(b))


def compare(name: str, statement: str, operands: dict, schedule: str | None, pairs: int) -> None:
    """``schedule`` is the one-pass kernel's; the old path keeps its default (a workspace)."""
    formats = {k: "csr" for k in operands}
    one = ct.compile(statement, formats={**formats, "C": "dh"}, schedule=schedule)
    old = ct.compile(statement, formats={**formats, "C": "ds"})
    tensors = {k: ct.asarray(v) for k, v in operands.items()}
    expected = old(**tensors).to_scipy()
    got = one(**tensors).asformat("csr").to_scipy()
    assert abs(got - expected).max() <= 1e-12 * abs(expected).max()
    ratio, one_s, old_s = paired(
        lambda: one(**tensors), lambda: old(**tensors).asformat("dh"), pairs
    )
    # (For scale: the compressed result alone, what the old path computed before packing.)
    ds_ratio, _, ds_s = paired(lambda: one(**tensors), lambda: old(**tensors), pairs)
    print(
        f"{name}: {expected.nnz / 1e6:.2f}M result entries, old/one-pass {ratio:.2f} "
        f"(one pass {one_s * 1e3:.1f} ms, ds + asformat {old_s * 1e3:.1f} ms); "
        f"ds alone/one-pass {ds_ratio:.2f} ({ds_s * 1e3:.1f} ms)"
    )


def reruns(rng: np.random.Generator, pairs: int) -> None:
    # SpGEMM whose last row of A holds 64 entries among rows of 8: its row of C holds about
    # 8 times the entries of the others. A kernel whose last call had rows of 8 only starts
    # from tables for those, and reruns (computing every row before the last each time)
    # until W holds the long row: the worst place for it.
    n, long_row = 50_000, 64
    B = uniform(rng, n, 8)
    flat = uniform(rng, n, 8)
    skew = flat.tolil()
    skew[n - 1, rng.choice(n, long_row, replace=False)] = 1.0
    skew = int32_indices(skew.tocsr())
    formats = {"A": "csr", "B": "csr"}
    statement = "C(i,j) = A(i,k) * B(k,j)"
    kern = ct.compile(statement, formats={**formats, "C": "dh"}, schedule="reorder(i,k,j)")
    old = ct.compile(statement, formats={**formats, "C": "ds"})
    A_flat, A_skew, B_ = ct.asarray(flat), ct.asarray(skew), ct.asarray(B)
    # After a call on `flat`, a try on `skew` starts with the W for flat's fullest row of C.
    fullest = int(np.diff((flat @ B).indptr).max())
    first = max(4, 1 << (2 * fullest - 1).bit_length())
    final = kern(A=A_skew, B=B_).levels[1].size
    steady, rerun, packed = [], [], []
    for _ in range(pairs):
        start = time.perf_counter()
        kern(A=A_skew, B=B_)  # the last call was on `skew`: W fits at once
        steady.append(time.perf_counter() - start)
        kern(A=A_flat, B=B_)  # its tables become the next call's first guess
        start = time.perf_counter()
        kern(A=A_skew, B=B_)
        rerun.append(time.perf_counter() - start)
        start = time.perf_counter()
        old(A=A_skew, B=B_).asformat("dh")
        packed.append(time.perf_counter() - start)
    steady_a, rerun_a, packed_a = np.array(steady), np.array(rerun), np.array(packed)
    ms = {name: float(np.median(a)) * 1e3 for name, a in [("one", steady_a), ("rerun", rerun_a)]}
    ms["old"] = float(np.median(packed_a)) * 1e3
    print(
        f"SpGEMM, last row of A {long_row} entries among {n} rows of 8: W from {first} to {final} "
        f"({int(np.log2(final // first))} reruns): with reruns / without "
        f"{np.median(rerun_a / steady_a):.2f}, old/with reruns "
        f"{np.median(packed_a / rerun_a):.2f}, old/without {np.median(packed_a / steady_a):.2f} "
        f"(one pass {ms['one']:.1f} ms, with reruns {ms['rerun']:.1f} ms, "
        f"ds + asformat {ms['old']:.1f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    args = parser.parse_args()
    ct.set_num_threads(1)
    rng = np.random.default_rng(0)
    A, B = uniform(rng, 200_000, 16), uniform(rng, 200_000, 16)
    compare(
        "elementwise A + B, 200k rows of 16",
        "C(i,j) = A(i,j) + B(i,j)",
        {"A": A, "B": B},
        None,
        args.pairs,
    )
    S, T = uniform(rng, 50_000, 8), uniform(rng, 50_000, 8)
    compare(
        "SpGEMM A @ B (order i,k,j), 50k rows of 8",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": S, "B": T},
        "reorder(i,k,j)",
        args.pairs,
    )
    reruns(rng, args.pairs)


if __name__ == "__main__":
    main()
