"""Kernel benchmark: coiter's compiled kernels against SciPy, in the same run on the same data.

Single-threaded, unscheduled coiter kernels (``ct.compile`` with no schedule) on random square
CSR matrices, float64 values and int32 indices, against the SciPy call that computes the
same result:

| kernel | coiter expression (formats) | SciPy |
|---|---|---|
| SpMV | ``y(i) = A(i,j) * x(j)`` (A csr, x y dense) | ``A @ x`` |
| SpAdd | ``C(i,j) = A(i,j) + B(i,j)`` (all csr) | ``A + B`` |
| elementwise multiply | ``C(i,j) = A(i,j) * B(i,j)`` (all csr) | ``A.multiply(B)`` |
| SpGEMM | ``C(i,j) = A(i,k) * B(k,j)`` (all csr) | ``A @ B`` |

SpMV, SpAdd and multiply run for each ``--nnz`` size (default 1 M and 10 M nonzeros, with
``--row-nnz`` = 10 nonzeros per row on average, so n = 100,000 and 1,000,000). B shares half
of A's pattern (so that the sum and the product have real overlap; two independent uniform
random matrices would barely intersect). SpGEMM runs on two independent random matrices of
``--spgemm-nnz`` nonzeros each (default 1 M and 2 M, also 10 per row), where SciPy's ``A @ B``
takes a few tenths of a second to about two seconds. SciPy's ``A @ B`` leaves each row's
column indices unsorted (coiter's CSR result is sorted), so SciPy's ``A @ B`` followed by
``sort_indices()`` is timed too, for a second ratio.

Only the kernel call is timed, with operands already wrapped (``ct.asarray`` of a canonical
SciPy CSR is zero copy): one warm-up call (for coiter it follows ``ct.compile``, timed apart),
then the median of ``--repeats`` calls (``--spgemm-repeats`` for SpGEMM), alternating SciPy
and coiter calls so that changes in the machine's load touch both alike. The warm-up result
is checked against SciPy's: SpMV with ``np.allclose``; sparse results must hold SciPy's
canonical CSR (same ``indptr`` and ``indices`` after sorting the column indices of each row,
values ``np.allclose``). A result that does not match is reported as such (with what differs),
and a coiter exception is recorded in the JSON; the run goes on either way.

Usage:  python benchmarks/bench_kernels.py [--quick] [--nnz N ...] [--spgemm-nnz N ...]
Writes JSON (default benchmarks/results/kernels.json) and prints a Markdown table.
"""
import argparse
import gc
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct
from run_environment import build_info, environment, write_results

CASES = {
    "spmv": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}),
    "spadd": ("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}),
    "multiply": ("C(i,j) = A(i,j) * B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}),
    "spgemm": ("C(i,j) = A(i,k) * B(k,j)", {"A": "csr", "B": "csr", "C": "csr"}),
    # SciPy's own output: CSR whose rows are not sorted (a compressed level with ordered=False).
    "spgemm_unsorted": ("C(i,j) = A(i,k) * B(k,j)",
                        {"A": "csr", "B": "csr", "C": ct.Format([ct.dense, ct.compressed(ordered=False)])}),
}
SCIPY_CALLS = {"spmv": "A @ x", "spadd": "A + B", "multiply": "A.multiply(B)", "spgemm": "A @ B",
               "spgemm_unsorted": "A @ B"}


def random_csr(nnz, n, rng, share_with=None, share=0.5):
    """Canonical n x n CSR, float64 / int32, about nnz nonzeros at uniform random coordinates
    (duplicates summed). With share_with, a fraction ``share`` of the coordinates is drawn from
    that matrix's pattern."""
    rows = rng.integers(0, n, size=nnz, dtype=np.int32)
    cols = rng.integers(0, n, size=nnz, dtype=np.int32)
    if share_with is not None:
        shared = int(nnz * share)
        coo = share_with.tocoo()
        pick = rng.choice(coo.nnz, size=min(shared, coo.nnz), replace=False)
        rows[:pick.size] = coo.row[pick]
        cols[:pick.size] = coo.col[pick]
    values = rng.random(nnz)
    csr = sp.coo_array((values, (rows, cols)), shape=(n, n)).tocsr()
    csr.sum_duplicates()
    assert csr.has_canonical_format and csr.indices.dtype == np.int32
    return csr


def time_call(fn):
    """Seconds one call of fn takes; its result is freed outside the clock."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    del result
    return seconds


def sorted_product(A, B):
    """SciPy's A @ B with sorted column indices (SciPy's own result leaves them unsorted)."""
    C = A @ B
    C.sort_indices()
    return C


def check_dense(ours, ref):
    ours = np.asarray(ours)
    ok = ours.shape == ref.shape and np.allclose(ours, ref)
    err = float(np.max(np.abs(ours - ref))) if ours.shape == ref.shape else None
    return {"ok": bool(ok), "max_abs_error": err}


def check_unsorted(tensor, ref):
    """Does an unordered-CSR tensor hold SciPy's result (same entries, any order in a row)?"""
    ref = ref.tocsr()
    ref.sum_duplicates()
    coords, values = tensor.coords()
    got = sp.csr_array((values, (coords[:, 0], coords[:, 1])), shape=tensor.shape)
    got.sum_duplicates()
    ok = bool(len(values) == ref.nnz and abs(got - ref).max() <= 1e-12 * max(1.0, abs(ref).max()))
    return {"format": str(tensor.format), "nnz": int(tensor.nnz), "scipy_nnz": int(ref.nnz), "ok": ok}


def check_csr(tensor, ref):
    """Does a CSR tensor hold SciPy's canonical result (after sorting column indices)?"""
    ref = ref.tocsr()
    ref.sum_duplicates()
    info = {"format": str(tensor.format), "nnz": int(tensor.nnz), "scipy_nnz": int(ref.nnz)}
    if tensor.format != ct.Format.parse("ds"):
        info.update(ok=False, problem=f"result format is {tensor.format}, not csr")
        return info
    level = tensor.levels[1]
    pos = np.array(level.pos, dtype=np.int64)
    crd = np.array(level.crd, dtype=np.int64)
    values = np.array(tensor.values)[:crd.size]
    n_rows = tensor.shape[0]
    # Within-row order: a step is bad when it does not increase and is not at a row start.
    row_start = np.zeros(crd.size, dtype=bool)
    row_start[pos[:-1][pos[:-1] < crd.size]] = True
    steps = np.diff(crd) <= 0
    bad = steps & ~row_start[1:]
    info["sorted_unique_rows"] = bool(not bad.any())
    # A fresh SciPy matrix on copies: SciPy checks the flags itself.
    ours = sp.csr_array((values, crd, pos), shape=tensor.shape)
    ours.sort_indices()
    rows_have_duplicates = bool(np.any((np.diff(ours.indices) == 0)
                                       & ~_row_starts(ours.indptr, ours.nnz)[1:]))
    info["duplicate_entries"] = rows_have_duplicates
    same_structure = (pos.size == n_rows + 1 and np.array_equal(ours.indptr, ref.indptr)
                      and np.array_equal(ours.indices, ref.indices))
    info["same_structure_after_sorting"] = bool(same_structure)
    if same_structure:
        info["max_abs_error"] = float(np.max(np.abs(ours.data - ref.data))) if ref.nnz else 0.0
        info["ok"] = bool(np.allclose(ours.data, ref.data))
    else:
        summed = ours.copy()
        summed.sum_duplicates()
        same_after_sum = (np.array_equal(summed.indptr, ref.indptr)
                          and np.array_equal(summed.indices, ref.indices)
                          and np.allclose(summed.data, ref.data))
        info["same_after_summing_duplicates"] = bool(same_after_sum)
        info["ok"] = False
        info["problem"] = ("structure differs from SciPy's canonical CSR"
                           + (" (the result holds duplicate entries; summed, they give SciPy's "
                              "matrix)" if same_after_sum and rows_have_duplicates else ""))
    return info


def _row_starts(indptr, nnz):
    starts = np.zeros(nnz, dtype=bool)
    first = indptr[:-1][indptr[:-1] < nnz]
    starts[first] = True
    return starts


def run_case(name, nnz_label, operands, scipy_fn, repeats, scipy_sorted_fn=None):
    expr, formats = CASES[name]
    record = {"kernel": name, "expression": expr, "formats": {k: str(f) for k, f in formats.items()},
              "scipy_call": SCIPY_CALLS[name], "nnz_label": nnz_label, "repeats": repeats}
    print(f"  {name:9s} {expr} ...", flush=True)
    # SciPy's warm-up result is the reference.
    start = time.perf_counter()
    ref = scipy_fn()
    record["scipy_warmup_s"] = time.perf_counter() - start
    kern_fn = None
    try:
        start = time.perf_counter()
        kern = ct.compile(expr, formats=formats, dtype=np.float64)
        record["compile_s"] = time.perf_counter() - start
        start = time.perf_counter()
        result = kern(**operands)
        record["coiter_warmup_s"] = time.perf_counter() - start
        check = (check_dense(result, ref) if name == "spmv" else
                 check_unsorted(result, ref) if name == "spgemm_unsorted" else check_csr(result, ref))
        del result
        record["check"] = check
        kern_fn = lambda: kern(**operands)  # noqa: E731
    except Exception as error:  # recorded, not hidden
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc()
        print(f"    coiter FAILED: {record['error']}", flush=True)
    del ref
    # Calls alternate between the two sides, so that a change in the machine's load
    # affects both alike.
    scipy_runs, coiter_runs, sorted_runs = [], [], []
    for _ in range(repeats):
        scipy_runs.append(time_call(scipy_fn))
        if scipy_sorted_fn is not None:
            sorted_runs.append(time_call(scipy_sorted_fn))
        if kern_fn is not None:
            try:
                coiter_runs.append(time_call(kern_fn))
            except Exception as error:
                record["error"] = f"{type(error).__name__} in a timed call: {error}"
                record["traceback"] = traceback.format_exc()
                kern_fn = None
    record["scipy_s"], record["scipy_runs_s"] = statistics.median(scipy_runs), scipy_runs
    if sorted_runs:
        # SciPy's A @ B leaves each row's column indices unsorted; coiter's CSR is sorted.
        record["scipy_sorted_s"] = statistics.median(sorted_runs)
        record["scipy_sorted_runs_s"] = sorted_runs
    if coiter_runs and "error" not in record:
        record["coiter_s"], record["coiter_runs_s"] = statistics.median(coiter_runs), coiter_runs
        record["ratio"] = record["coiter_s"] / record["scipy_s"]
        if sorted_runs:
            record["ratio_vs_sorted"] = record["coiter_s"] / record["scipy_sorted_s"]
    gc.collect()
    return record


def _fmt_time(seconds):
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nnz", type=int, nargs="+", default=[1_000_000, 10_000_000],
                        help="nonzeros per matrix for SpMV, SpAdd, multiply (default 1e6 1e7)")
    parser.add_argument("--spgemm-nnz", type=int, nargs="*", default=[1_000_000, 2_000_000],
                        help="nonzeros per SpGEMM operand (default 1e6 2e6; none to skip)")
    parser.add_argument("--row-nnz", type=int, default=10,
                        help="average nonzeros per row; n = nnz / row-nnz (default 10)")
    parser.add_argument("--repeats", type=int, default=15, help="timed calls (default 15)")
    parser.add_argument("--spgemm-repeats", type=int, default=7,
                        help="timed SpGEMM calls (default 7)")
    parser.add_argument("--quick", action="store_true",
                        help="1 M nonzeros only, SpGEMM at 1 M, 5 timed calls each")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "kernels.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.nnz, args.spgemm_nnz = [1_000_000], [1_000_000]
        args.repeats = args.spgemm_repeats = 5
    if args.repeats < 1 or args.spgemm_repeats < 1:
        parser.error("repeats must be positive")

    rng = np.random.default_rng(args.seed)
    records = []
    wall = time.perf_counter()
    for nnz in args.nnz:
        n = max(1, nnz // args.row_nnz)
        A = random_csr(nnz, n, rng)
        B = random_csr(nnz, n, rng, share_with=A)
        x = rng.random(n)
        tA, tB, tx = ct.asarray(A), ct.asarray(B), ct.asarray(x)
        assert np.shares_memory(tA.values, A.data) and np.shares_memory(tB.values, B.data)
        print(f"{n:,} x {n:,}, A {A.nnz:,} and B {B.nnz:,} nonzeros", flush=True)
        label = {"nnz_requested": nnz, "n": n, "A_nnz": int(A.nnz), "B_nnz": int(B.nnz)}
        records.append(run_case("spmv", label, {"A": tA, "x": tx}, lambda: A @ x, args.repeats))
        records.append(run_case("spadd", label, {"A": tA, "B": tB}, lambda: A + B, args.repeats))
        records.append(run_case("multiply", label, {"A": tA, "B": tB}, lambda: A.multiply(B),
                                args.repeats))
        del A, B, x, tA, tB, tx
        gc.collect()
    for nnz in args.spgemm_nnz:
        n = max(1, nnz // args.row_nnz)
        A = random_csr(nnz, n, rng)
        B = random_csr(nnz, n, rng)
        tA, tB = ct.asarray(A), ct.asarray(B)
        print(f"SpGEMM: {n:,} x {n:,}, A {A.nnz:,} and B {B.nnz:,} nonzeros", flush=True)
        label = {"nnz_requested": nnz, "n": n, "A_nnz": int(A.nnz), "B_nnz": int(B.nnz)}
        records.append(run_case("spgemm", label, {"A": tA, "B": tB}, lambda: A @ B,
                                args.spgemm_repeats, scipy_sorted_fn=lambda: sorted_product(A, B)))
        records.append(run_case("spgemm_unsorted", label, {"A": tA, "B": tB}, lambda: A @ B,
                                args.spgemm_repeats))
        del A, B, tA, tB
        gc.collect()
    wall = time.perf_counter() - wall

    result = {
        "benchmark": "kernels", "value_dtype": "float64", "index_dtype": "int32",
        "threads": 1, "schedule": None, "row_nnz": args.row_nnz, "seed": args.seed,
        "quick": args.quick, "cases": records, "wall_s": wall,
        "failures": [f"{r['kernel']} @ {r['nnz_label']['nnz_requested']:,}: "
                     + (r.get("error") or r["check"].get("problem", "result differs"))
                     for r in records if "error" in r or not r["check"]["ok"]],
        "environment": environment(engine=ct.compiler.default_engine()), "build": build_info(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_results(args.output, result)

    print(f"\nfloat64 values, int32 indices, single thread, {args.row_nnz} nonzeros per row on "
          f"average; median of {args.repeats} calls ({args.spgemm_repeats} for SpGEMM), "
          f"{result['environment']['cpus']} CPUs, engine {result['environment']['engine']}\n")
    print("| kernel | n | nnz (A, B) | coiter | SciPy | coiter / SciPy | matches SciPy |")
    print("|---|---:|---:|---:|---:|---:|:-:|")
    for r in records:
        lab = r["nnz_label"]
        head = (f"| {r['kernel']} (`{r['scipy_call']}`) | {lab['n']:,} "
                f"| {lab['A_nnz']:,}, {lab['B_nnz']:,} ")
        if "error" in r:
            print(head + f"| **error** | {_fmt_time(r['scipy_s'])} | - | **error** |")
            continue
        match = "yes" if r["check"]["ok"] else "**no**"
        print(head + f"| {_fmt_time(r['coiter_s'])} | {_fmt_time(r['scipy_s'])} "
              f"| {r['ratio']:.2f}x | {match} |")
    for r in records:
        if "scipy_sorted_s" in r and "coiter_s" in r:
            print(f"\n{r['kernel']} at n = {r['nnz_label']['n']:,}: SciPy's `A @ B` leaves column "
                  f"indices unsorted; with `sort_indices()` it takes "
                  f"{_fmt_time(r['scipy_sorted_s'])} (coiter / that = "
                  f"{r['ratio_vs_sorted']:.2f}x; coiter's CSR result is sorted)")
    for failure in result["failures"]:
        print(f"PROBLEM: {failure}")
    print(f"\nwall time {wall:.0f} s; results: {args.output}")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
