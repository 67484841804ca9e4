"""Packing benchmark: coiter versus SciPy on the data layer.

(a) pack: COO -> CSR. ``ct.asarray(coo, format="csr")`` against SciPy's ``coo.tocsr()`` on
    the same random COO matrix (default 10 M nonzeros, 1e6 x 1e6, float64 values, int32
    indices, unsorted, a few duplicates that both sum). Median of ``--repeats`` timed runs
    after one warm-up run each. Target: coiter <= 2x SciPy.
(b) wrap: ``ct.asarray(csr)`` of a canonical SciPy CSR with the same nonzeros. This is zero
    copy (checked with np.shares_memory); median over ``--calls`` calls. Target: < 50 us.
    The very first call on a freshly built csr_array also pays SciPy's O(nnz)
    ``has_canonical_format`` check (SciPy caches the flag); that time is reported apart.

Usage:  python benchmarks/bench_packing.py [--nnz N] [--repeats R] [--calls C] [--output PATH]
Writes JSON (default benchmarks/results/packing.json) and prints a Markdown table.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct
from run_environment import environment, write_results

PACK_TARGET_RATIO = 2.0
WRAP_TARGET_US = 50.0


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_seconds(fn, repeats, warmup=1):
    for _ in range(warmup):
        fn()
    times = [timed(fn)[0] for _ in range(repeats)]
    return statistics.median(times), times


def make_coo(nnz, n, seed):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, size=nnz, dtype=np.int32)
    cols = rng.integers(0, n, size=nnz, dtype=np.int32)
    vals = rng.random(nnz)
    return sp.coo_array((vals, (rows, cols)), shape=(n, n))


def check_same_csr(tensor, ref):
    """The coiter CSR tensor holds exactly SciPy's canonical CSR."""
    assert tensor.format == ct.Format.parse("ds"), tensor.format
    level = tensor.levels[1]
    assert np.array_equal(level.pos, ref.indptr)
    assert np.array_equal(level.crd, ref.indices)
    assert np.array_equal(tensor.values, ref.data)


def bench_pack(coo, repeats):
    ours = lambda: ct.asarray(coo, format="csr")  # noqa: E731
    scipys = lambda: coo.tocsr()  # noqa: E731
    # Interleave warm-ups, then time each side; check results once.
    check_same_csr(ours(), scipys())
    t_ours, all_ours = median_seconds(ours, repeats)
    t_scipy, all_scipy = median_seconds(scipys, repeats)
    return {
        "coiter_s": t_ours, "scipy_s": t_scipy, "ratio": t_ours / t_scipy,
        "coiter_runs_s": all_ours, "scipy_runs_s": all_scipy,
        "target_ratio": PACK_TARGET_RATIO, "meets_target": t_ours / t_scipy <= PACK_TARGET_RATIO,
    }


def bench_wrap(coo, calls):
    canonical = coo.tocsr()  # sorted, duplicates summed
    # A fresh matrix object on the same arrays: SciPy has not cached its canonical flag yet.
    fresh = sp.csr_array((canonical.data, canonical.indices, canonical.indptr),
                         shape=canonical.shape)
    first_s, tensor = timed(lambda: ct.asarray(fresh))
    assert np.shares_memory(tensor.values, fresh.data), "asarray copied the values"
    assert np.shares_memory(tensor.levels[1].crd, fresh.indices), "asarray copied crd"
    assert np.shares_memory(tensor.levels[1].pos, fresh.indptr), "asarray copied pos"
    check_same_csr(tensor, canonical)
    t, runs = median_seconds(lambda: ct.asarray(fresh), calls, warmup=10)
    us = t * 1e6
    return {
        "median_us": us, "min_us": min(runs) * 1e6, "calls": calls,
        "first_call_fresh_matrix_us": first_s * 1e6, "zero_copy": True,
        "target_us": WRAP_TARGET_US, "meets_target": us < WRAP_TARGET_US,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nnz", type=int, default=10_000_000, help="nonzeros (default 10 M)")
    parser.add_argument("--n", type=int, default=1_000_000, help="rows = columns (default 1e6)")
    parser.add_argument("--repeats", type=int, default=7, help="timed packing runs (>= 5)")
    parser.add_argument("--calls", type=int, default=2000, help="timed asarray calls")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "packing.json")
    args = parser.parse_args(argv)
    if args.repeats < 5:
        parser.error("--repeats must be at least 5")

    coo = make_coo(args.nnz, args.n, args.seed)
    print(f"benchmarking COO {args.n:,} x {args.n:,} with {args.nnz:,} nonzeros ...", flush=True)
    pack = bench_pack(coo, args.repeats)
    wrap = bench_wrap(coo, args.calls)
    result = {
        "benchmark": "packing",
        "nnz": args.nnz, "shape": [args.n, args.n], "value_dtype": "float64",
        "index_dtype": "int32", "repeats": args.repeats, "seed": args.seed,
        "pack_coo_to_csr": pack, "asarray_canonical_csr": wrap,
        "environment": environment(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_results(args.output, result)

    ok = lambda flag: "yes" if flag else "**no**"  # noqa: E731
    print(f"\n{args.nnz:,} nonzeros, {args.n:,} x {args.n:,}, float64 / int32, "
          f"median of {args.repeats} runs ({result['environment']['cpus']} CPUs)\n")
    print("| benchmark | coiter | SciPy | ratio | target | met |")
    print("|---|---:|---:|---:|---:|:-:|")
    print(f"| COO -> CSR (`ct.asarray(coo, format=\"csr\")` vs `coo.tocsr()`) "
          f"| {pack['coiter_s'] * 1e3:.0f} ms | {pack['scipy_s'] * 1e3:.0f} ms "
          f"| {pack['ratio']:.2f}x | <= {PACK_TARGET_RATIO:g}x | {ok(pack['meets_target'])} |")
    print(f"| `ct.asarray(csr)`, canonical, zero copy | {wrap['median_us']:.1f} us | - | - "
          f"| < {WRAP_TARGET_US:g} us | {ok(wrap['meets_target'])} |")
    print(f"\nfirst asarray of a fresh csr_array (SciPy's O(nnz) canonical check): "
          f"{wrap['first_call_fresh_matrix_us'] / 1e3:.1f} ms")
    print(f"results: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
