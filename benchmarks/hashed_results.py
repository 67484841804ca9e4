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


def uniform(rng: np.random.Generator, n: int, per_row: int) -> sp.csr_array:
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, n, rows.size)
    m = sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    return m


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
    print(
        f"{name}: {expected.nnz / 1e6:.2f}M result entries, old/one-pass {ratio:.2f} "
        f"(one pass {one_s * 1e3:.1f} ms, ds + asformat {old_s * 1e3:.1f} ms)"
    )


def reruns(rng: np.random.Generator, pairs: int) -> None:
    # One row of 1000 among rows of 4: every row's table then has 2048 buckets (W is one count
    # for the level), and a kernel whose last call had small tables reruns until W fits.
    n, full = 10_000, 1_000
    flat = uniform(rng, n, 4)
    skew = uniform(rng, n, 4).tolil()
    skew[0, :full] = 1.0
    skew = skew.tocsr()
    kern = ct.compile("C(i,j) = 2 * A(i,j)", formats={"A": "csr", "C": "dh"})
    old = ct.compile("C(i,j) = 2 * A(i,j)", formats={"A": "csr", "C": "ds"})
    A_flat, A_skew = ct.asarray(flat), ct.asarray(skew)
    # After a call on `flat`, the first try on `skew` has the W for flat's fullest row.
    first = max(4, 1 << int(2 * np.diff(flat.indptr).max() - 1).bit_length())
    final = kern(A=A_skew).levels[1].size

    steady, rerun, packed = [], [], []
    for _ in range(pairs):
        start = time.perf_counter()
        kern(A=A_skew)  # the last call was on `skew`: W fits at once
        steady.append(time.perf_counter() - start)
        kern(A=A_flat)  # its small tables become the next call's first guess
        start = time.perf_counter()
        kern(A=A_skew)
        rerun.append(time.perf_counter() - start)
        start = time.perf_counter()
        old(A=A_skew).asformat("dh")
        packed.append(time.perf_counter() - start)
    steady_a, rerun_a, packed_a = np.array(steady), np.array(rerun), np.array(packed)
    ms = {name: float(np.median(a)) * 1e3 for name, a in [("one", steady_a), ("rerun", rerun_a)]}
    ms["old"] = float(np.median(packed_a)) * 1e3
    print(
        f"skewed rows ({n} rows of 4, one of {full}): W from {first} to {final} by doubling "
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
