"""GPU benchmarks (issue 19): coiter's target="cuda" kernels against cuSPARSE through CuPy, in
one process, on device-resident data. Run on a machine with an NVIDIA GPU and CuPy:

    python -m benchmarks.gpu [--rows N] [--spmm-rows N] [--sparse-rows N] [--sddmm-rows N]
                             [--spgemm-rows N] [--out results.json]

Each case times whole calls as users make them, synchronized (coiter's call returns when the
kernel is done; CuPy's is followed by a device synchronize), median of repeated runs after a
warm-up, and the GPU time alone (CUDA events: around coiter's kernel launch, around CuPy's call),
and checks the results against each other. SpMV is also reported as a share of the
device's copy bandwidth (a device-to-device copy of 1 GiB, bytes read plus written), counting
the bytes SpMV must move at least: the matrix's values, column indices and row pointers, x once
and y once.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .timing import RepeatPolicy, measure_interleaved, median_of


def gpu_seconds(call, repeats=20):
    """Median GPU time of coiter's kernel (CUDA events around its launch)."""
    times = []
    for _ in range(repeats):
        call()
        times.append(ct._core.cuda_last_kernel_seconds())
    return statistics.median(times)


def cupy_gpu_seconds(call, repeats=20):
    """Median GPU time of a CuPy call (cupyx.profiler.benchmark: CUDA events around it, which
    include every kernel the call launches)."""
    from cupyx.profiler import benchmark

    return float(np.median(benchmark(call, n_repeat=repeats, n_warmup=3).gpu_times[0]))


def copy_bandwidth(cp):
    a = cp.ones(1 << 27, dtype=cp.float64)  # 1 GiB
    b = cp.empty_like(a)

    def run():
        b[...] = a
        cp.cuda.Device().synchronize()

    return 2 * a.nbytes / median_of(run, repeats=20, warmup=3).median


def matrices(rows, per_row, rng):
    """A uniform matrix (per_row random columns per row) and a skewed one (row lengths from a
    power law, same total), both CSR float64 with int32 indices."""
    nnz = rows * per_row
    uniform = sp.random(
        rows, rows, density=per_row / rows, format="csr", random_state=rng, dtype=np.float64
    )
    lengths = np.minimum(rng.zipf(1.8, rows), rows // 4).astype(np.int64)
    lengths = np.maximum(1, (lengths * (nnz / lengths.sum())).astype(np.int64))
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    cols = rng.integers(0, rows, indptr[-1])
    skewed = sp.csr_matrix((rng.standard_normal(indptr[-1]), cols, indptr), shape=(rows, rows))
    skewed.sum_duplicates()
    skewed.sort_indices()
    for m in (uniform, skewed):
        m.indices = m.indices.astype(np.int32)
        m.indptr = m.indptr.astype(np.int32)
    return {"uniform": uniform, "skewed (power law rows)": skewed}


# Schedules compared with the default on every matrix (None: the default GPU schedule).
SPMV_SCHEDULES = {
    "default (4 nonzeros per thread)": None,
    "warp per row": "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,parallel_reduction)",
    "8 nonzeros per thread": "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);"
    "parallelize(fp0,gpu_thread,atomics)",
    "TACO's published schedule": "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,2048);"
    "split(fpos1,warp,fpos2,256);split(fpos2,thread,thr_nz,8);"
    "reorder(block,warp,thread,thr_nz);parallelize(block,gpu_block,no_races);"
    "parallelize(warp,gpu_warp,ignore_races);parallelize(thread,gpu_thread,atomics)",
}
SPMM_SCHEDULES = {
    "default (32 nonzeros per warp, a lane sums its row)": None,
    "32 nonzeros per warp, added per nonzero": "fuse(i,k,f);pos(f,fp,A(i,k));split(fp,fp0,fp1,32);"
    "parallelize(fp0,gpu_warp,atomics);parallelize(j,gpu_thread,no_races)",
    "warp per row": "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,no_races)",
    "8 nonzeros per warp": "fuse(i,k,f);pos(f,fp,A(i,k));split(fp,fp0,fp1,8);"
    "parallelize(fp0,gpu_warp,atomics);parallelize(j,gpu_thread,no_races)",
}


# Calls are timed interleaved (one of each in turn), so that the machine's load touches both
# peers alike (benchmarks/timing.py).
POLICY = RepeatPolicy(min_repeats=10, max_repeats=30, budget_s=0.5, cap_s=10.0)


def dense_results_agree(ours, theirs):
    np.testing.assert_allclose(ours.to_numpy(), theirs.get(), rtol=1e-10, atol=1e-10)


def sparse_results_agree(ours, theirs):
    """The same values (coiter keeps entries whose sum cancels to zero, as cuSPARSE does)."""
    difference = ours.to_scipy().tocsr() - theirs.get().tocsr()
    assert abs(difference).max() <= 1e-10 if difference.nnz else True


def compare(ours, theirs, synchronize, agree=dense_results_agree):
    """Whole-call and GPU times of coiter's call ``ours`` and CuPy's ``theirs`` (each returns
    its result; ``synchronize`` waits for CuPy's), after checking that they ``agree``."""

    def theirs_synchronized():
        result = theirs()
        synchronize()
        return result

    seconds, results = {}, {}
    for name, fn in (("coiter", ours), ("cusparse", theirs_synchronized)):
        start = time.perf_counter()
        results[name] = fn()
        seconds[name] = time.perf_counter() - start
    agree(results["coiter"], results["cusparse"])
    timed = measure_interleaved(
        {"coiter": ours, "cusparse": theirs_synchronized}, POLICY, seconds, warmup_rounds=3
    )
    t_ours, t_theirs = timed["coiter"].median, timed["cusparse"].median
    g_ours, g_theirs = gpu_seconds(ours), cupy_gpu_seconds(theirs)
    return {
        "coiter_ms": 1e3 * t_ours,
        "cusparse_ms": 1e3 * t_theirs,
        "speedup_vs_cusparse": t_theirs / t_ours,
        "coiter_gpu_ms": 1e3 * g_ours,
        "cusparse_gpu_ms": 1e3 * g_theirs,
        "gpu_speedup": g_theirs / g_ours,
    }


def spmv_case(cp, cpsp, name, A, bandwidth, label="default", schedule=None, cupy_operands=False):
    """SpMV on tensors moved to the GPU once or, with ``cupy_operands``, on CuPy's own matrix
    and vector passed as they are: each call then adopts them (checking the matrix's indices
    on the GPU)."""
    n = A.shape[1]
    x = np.random.default_rng(1).standard_normal(n)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "y": "d"},
        schedule=schedule,
        target="cuda",
    )
    dA, dx = ct.asarray(A).to("cuda"), ct.asarray(x).to("cuda")
    gA, gx = cpsp.csr_matrix(A), cp.asarray(x)
    case = {
        "kernel": "SpMV",
        "schedule": label,
        "matrix": name,
        "rows": A.shape[0],
        "nnz": int(A.nnz),
    }
    ours = (lambda: kern(A=gA, x=gx)) if cupy_operands else (lambda: kern(A=dA, x=dx))
    case.update(compare(ours, lambda: gA @ gx, cp.cuda.Device().synchronize))
    moved = A.nnz * (8 + 4) + (A.shape[0] + 1) * 4 + n * 8 + A.shape[0] * 8
    case["coiter_bandwidth_share"] = moved / (case["coiter_gpu_ms"] / 1e3) / bandwidth
    return case


def spmm_case(cp, cpsp, name, A, cols, label="default", schedule=None):
    B = np.random.default_rng(2).standard_normal((A.shape[1], cols))
    kern = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)",
        formats={"A": "csr", "B": "dd", "C": "dd"},
        schedule=schedule,
        target="cuda",
    )
    dA, dB = ct.asarray(A).to("cuda"), ct.asarray(B).to("cuda")
    gA, gB = cpsp.csr_matrix(A), cp.asarray(B)
    case = {
        "kernel": f"SpMM ({cols} columns)",
        "schedule": label,
        "matrix": name,
        "rows": A.shape[0],
        "nnz": int(A.nnz),
    }
    case.update(compare(lambda: kern(A=dA, B=dB), lambda: gA @ gB, cp.cuda.Device().synchronize))
    return case


# Sparse results (count, offsets, fill on the device) against cuSPARSE's csrgeam (A + B) and
# CuPy's elementwise product of CSR matrices, on a second matrix of independent pattern (random
# patterns barely overlap) and on the same pattern with other values.
SPARSE_RESULTS = {
    "SpAdd": ("C(i,j) = A(i,j) + B(i,j)", lambda gA, gB: gA + gB),
    "elementwise product": ("C(i,j) = A(i,j) * B(i,j)", lambda gA, gB: gA.multiply(gB)),
}


def sparse_result_case(cp, cpsp, kernel, name, A, B, pattern):
    expr, theirs = SPARSE_RESULTS[kernel]
    kern = ct.compile(expr, formats={"A": "csr", "B": "csr", "C": "csr"}, target="cuda")
    dA, dB = ct.asarray(A).to("cuda"), ct.asarray(B).to("cuda")
    gA, gB = cpsp.csr_matrix(A), cpsp.csr_matrix(B)
    case = {
        "kernel": kernel,
        "schedule": "default (a thread per row, two passes)",
        "matrix": f"{name}, {pattern}",
        "rows": A.shape[0],
        "nnz": int(A.nnz + B.nnz),
    }
    case.update(
        compare(
            lambda: kern(A=dA, B=dB),
            lambda: theirs(gA, gB),
            cp.cuda.Device().synchronize,
            sparse_results_agree,
        )
    )
    return case


# The result keeps A's pattern (docs/compiler.md): its entries are stored at A's positions, so
# any split of A's nonzeros fills it without races.
SDDMM_SCHEDULES = {
    "default (4 nonzeros per thread)": None,
    "a nonzero per thread": "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,1);"
    "parallelize(fp0,gpu_thread,no_races)",
    "16 nonzeros per thread": "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,16);"
    "parallelize(fp0,gpu_thread,no_races)",
    "8 nonzeros per warp, lanes over k": "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);"
    "parallelize(fp0,gpu_warp,no_races);parallelize(k,gpu_thread,parallel_reduction)",
    "a thread per row": "parallelize(i,gpu_thread,no_races)",
}


def sddmm_case(cp, cpsp, name, A, rank, label="default", schedule=None):
    """SDDMM with a CSR result, C = A .* (M @ N), against CuPy's spelling of it (CuPy wraps no
    cuSPARSE SDDMM): the rows of M and columns of N that A's entries pick, multiplied and
    summed, then scaled by A's values."""
    r = np.random.default_rng(3)
    M, N = r.standard_normal((A.shape[0], rank)), r.standard_normal((rank, A.shape[1]))
    kern = ct.compile(
        "C(i,j) = A(i,j) * M(i,k) * N(k,j)",
        formats={"A": "csr", "M": "dd", "N": "dd", "C": "csr"},
        schedule=schedule,
        target="cuda",
    )
    dA, dM, dN = (ct.asarray(v).to("cuda") for v in (A, M, N))
    gA, gM, gNT = cpsp.csr_matrix(A), cp.asarray(M), cp.asarray(np.ascontiguousarray(N.T))
    rows = cp.asarray(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)))

    def theirs():
        picked = (gM[rows] * gNT[gA.indices]).sum(axis=1)
        return cpsp.csr_matrix((gA.data * picked, gA.indices, gA.indptr), shape=A.shape)

    case = {
        "kernel": f"SDDMM (rank {rank})",
        "schedule": label,
        "matrix": name,
        "rows": A.shape[0],
        "nnz": int(A.nnz),
        "peer": "CuPy gather-multiply-sum (no cuSPARSE SDDMM in CuPy)",
    }
    case.update(
        compare(
            lambda: kern(A=dA, M=dM, N=dN),
            theirs,
            cp.cuda.Device().synchronize,
            sparse_results_agree,
        )
    )
    return case


def spgemm_case(cp, cpsp, name, A):
    """SpGEMM with a CSR result against cuSPARSE's SpGEMM (CuPy's A @ B). On the GPU coiter
    computes it as inner products over a CSC copy of B (docs/gpu.md): work grows with the
    result's dimensions, so this case is small."""
    B = A.T.tocsr()
    dA, dB = ct.asarray(A).to("cuda"), ct.asarray(B).to("cuda")
    gA, gB = cpsp.csr_matrix(A), cpsp.csr_matrix(B)
    case = {
        "kernel": "SpGEMM (A @ A.T)",
        "schedule": "ct.evaluate's choice (B converted to CSC, inner products)",
        "matrix": name,
        "rows": A.shape[0],
        "nnz": int(A.nnz),
    }
    case.update(
        compare(
            lambda: ct.evaluate(
                "C(i,j) = A(i,k) * B(k,j)", A=dA, B=dB, out_format="csr", target="cuda"
            ),
            lambda: gA @ gB,
            cp.cuda.Device().synchronize,
            sparse_results_agree,
        )
    )
    return case


def compile_latency():
    """Seconds to compile a GPU kernel cold (empty cache) and to get it from the disk cache in
    a fresh process."""
    code = (
        "import time, coiter as ct; t = time.perf_counter();"
        "ct.compile('y(i) = A(i,j) * x(j)', formats={'A':'csr','x':'d','y':'d'}, target='cuda');"
        "print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, COITER_CACHE_DIR=cache)
        cold = float(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
        warm = float(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    return {"cold_s": cold, "disk_cache_s": warm}


def record(report, case, *args):
    """Runs one case into the report. A case that fails (its results disagree, or a kernel
    raises) is recorded with its error and the others still run (a GPU machine's time is
    scarce); the run then exits with status 1."""
    try:
        result = case(*args)
    except Exception as error:  # recorded in the report and the exit status, never dropped
        result = {"case": case.__name__, "arguments": [str(a)[:80] for a in args[2:]]}
        result["error"] = f"{type(error).__name__}: {error}"
        report["failures"] += 1
    report["cases"].append(result)
    print(json.dumps(result), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="SpMV's rows; 0: no SpMV cases")
    parser.add_argument("--per-row", type=int, default=12)
    parser.add_argument("--spmm-rows", type=int, default=200_000, help="0: no SpMM cases")
    parser.add_argument(
        "--sparse-rows", type=int, default=1_000_000, help="0: no sparse-result cases"
    )
    parser.add_argument("--sddmm-rows", type=int, default=200_000, help="0: no SDDMM cases")
    parser.add_argument(
        "--spgemm-rows", type=int, default=5_000, help="0: no SpGEMM cases (inner products)"
    )
    parser.add_argument("--no-compile-latency", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args()
    import cupy as cp
    import cupyx.scipy.sparse as cpsp

    rng = np.random.default_rng(0)
    status = ct.cuda.status()
    bandwidth = copy_bandwidth(cp)
    report = {"device": status, "copy_bandwidth_GBps": bandwidth / 1e9, "cases": [], "failures": 0}
    print(
        f"{status['name']} ({status['arch']}), copy bandwidth {bandwidth / 1e9:.0f} GB/s",
        flush=True,
    )
    for name, A in (matrices(args.rows, args.per_row, rng) if args.rows else {}).items():
        for label, schedule in SPMV_SCHEDULES.items():
            record(report, spmv_case, cp, cpsp, name, A, bandwidth, label, schedule)
        label = "default, CuPy operands adopted at each call"
        record(report, spmv_case, cp, cpsp, name, A, bandwidth, label, None, True)
    for name, A in (matrices(args.spmm_rows, args.per_row, rng) if args.spmm_rows else {}).items():
        for cols in (32, 128):
            for label, schedule in SPMM_SCHEDULES.items():
                record(report, spmm_case, cp, cpsp, name, A, cols, label, schedule)
    if args.sparse_rows:
        firsts = matrices(args.sparse_rows, args.per_row, rng)
        seconds = matrices(args.sparse_rows, args.per_row, np.random.default_rng(5))
        for name, A in firsts.items():
            same = A.copy()
            same.data = rng.standard_normal(A.nnz)
            for pattern, B in (("independent pattern", seconds[name]), ("same pattern", same)):
                for kernel in SPARSE_RESULTS:
                    record(report, sparse_result_case, cp, cpsp, kernel, name, A, B, pattern)
    sddmm_matrices = matrices(args.sddmm_rows, args.per_row, rng) if args.sddmm_rows else {}
    for name, A in sddmm_matrices.items():
        for rank in (16, 64):
            for label, schedule in SDDMM_SCHEDULES.items():
                record(report, sddmm_case, cp, cpsp, name, A, rank, label, schedule)
    for name, A in (matrices(args.spgemm_rows, 8, rng) if args.spgemm_rows else {}).items():
        record(report, spgemm_case, cp, cpsp, name, A)
    if not args.no_compile_latency:
        report["compile_latency"] = compile_latency()
        print(json.dumps(report["compile_latency"]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    if report["failures"]:
        sys.exit(f"{report['failures']} case(s) failed (their errors are in the report)")


if __name__ == "__main__":
    main()
