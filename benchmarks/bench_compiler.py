"""Compiler benchmark: how long compiling takes, and what a call of a cached kernel costs.

All three measurements use CSR SpMV, ``y(i) = A(i,j) * x(j)`` (A csr, x and y dense, float64).

(a) cold compile: ``ct.compile(...)`` from an empty cache. Before each sample the process
    points ``COITER_CACHE_DIR`` at a fresh, empty temporary directory and calls
    ``ct.clear_cache(disk=True)`` (memory and disk); nothing else changes between samples.
    Median of ``--samples`` (default 25, at least 15) for the LLVM engine and for the C engine.
    The very first compile in the process (which also starts the engine: LLVM's JIT, or finds
    the C compiler) is a warm-up, reported apart. Each sample is checked (``ct.cache_info()``)
    to have generated code once and found nothing on disk. Target: LLVM median <= 20 ms.
(b) fresh process, warm disk cache: a cache directory is filled once, then ``--processes``
    (default 15, at least 10) new ``python -c`` processes each import coiter and time only
    their first ``ct.compile`` of the same SpMV, which must be served from disk (checked:
    one disk hit, no compile). Median over processes, per engine. Target: LLVM <= 2 ms.
(c) per-call overhead: a cached kernel on a 4 x 4 CSR matrix, ``kern(A=A, x=x)`` with both
    operands already wrapped as coiter tensors; ``timeit`` with ``--number`` (default 2000)
    calls, repeated ``--repeat`` (default 7) times, median of the per-call times. SciPy's
    ``A @ x`` on the same matrix is timed the same way for context. Target: <= 5 us.

Usage:  python benchmarks/bench_compiler.py [--samples N] [--processes P] [--output PATH]
Writes JSON (default benchmarks/results/compiler.json) and prints a Markdown table.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct
from run_environment import build_info, environment, write_results

EXPR = "y(i) = A(i,j) * x(j)"
FORMATS = {"A": "csr", "x": "d", "y": "d"}
COLD_TARGET_MS = 20.0      # LLVM engine, empty cache
WARM_PROCESS_TARGET_MS = 2.0
CALL_TARGET_US = 5.0

# Run in a fresh interpreter: import, then time only the first compile (served from disk).
CHILD = """
import json, time
import numpy as np
import coiter as ct
start = time.perf_counter()
kern = ct.compile({expr!r}, formats={formats!r}, dtype=np.float64, engine={engine!r})
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "cache": ct.cache_info()}}))
"""


def compile_spmv(engine):
    return ct.compile(EXPR, formats=FORMATS, dtype=np.float64, engine=engine)


def cold_compile(engine, samples, scratch):
    """Median time of ct.compile with an empty memory cache and an empty disk cache."""
    saved = os.environ.get("COITER_CACHE_DIR")
    times, problems = [], []
    try:
        for k in range(samples + 1):  # sample 0 is the warm-up (first compile in the process)
            directory = tempfile.mkdtemp(prefix=f"cold-{engine}-{k}-", dir=scratch)
            os.environ["COITER_CACHE_DIR"] = directory
            ct.clear_cache(disk=True)
            before = ct.cache_info()
            start = time.perf_counter()
            compile_spmv(engine)
            seconds = time.perf_counter() - start
            after = ct.cache_info()
            compiles = after["compiles"] - before["compiles"]
            disk_hits = after["disk_hits"] - before["disk_hits"]
            if compiles != 1 or disk_hits != 0:
                problems.append(f"sample {k}: {compiles} compiles, {disk_hits} disk hits")
            times.append(seconds)
    finally:
        if saved is None:
            os.environ.pop("COITER_CACHE_DIR", None)
        else:
            os.environ["COITER_CACHE_DIR"] = saved
    first, runs = times[0], times[1:]
    return {
        "median_ms": statistics.median(runs) * 1e3, "min_ms": min(runs) * 1e3,
        "max_ms": max(runs) * 1e3, "samples": len(runs), "runs_ms": [t * 1e3 for t in runs],
        "first_in_process_ms": first * 1e3, "problems": problems,
    }


def warm_disk_fresh_process(engine, processes, scratch):
    """Median time of the first ct.compile in a new process whose disk cache holds the kernel."""
    directory = tempfile.mkdtemp(prefix=f"warm-{engine}-", dir=scratch)
    env = {**os.environ, "COITER_CACHE_DIR": directory}
    code = CHILD.format(expr=EXPR, formats=FORMATS, engine=engine)
    # The first process fills the disk cache (it compiles); it is not counted.
    runs, problems, fill = [], [], None
    for k in range(processes + 1):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        report = json.loads(out.stdout.strip().splitlines()[-1])
        cache = report["cache"]
        if k == 0:
            fill = report["seconds"]
            continue
        if cache["disk_hits"] != 1 or cache["compiles"] != 0:
            problems.append(f"process {k}: {cache['compiles']} compiles, "
                            f"{cache['disk_hits']} disk hits")
        runs.append(report["seconds"])
    return {
        "median_ms": statistics.median(runs) * 1e3, "min_ms": min(runs) * 1e3,
        "max_ms": max(runs) * 1e3, "processes": len(runs), "runs_ms": [t * 1e3 for t in runs],
        "filling_process_compile_ms": fill * 1e3, "problems": problems,
    }


def per_call(number, repeat):
    """Per-call time of a cached SpMV kernel on a 4 x 4 CSR matrix, and of SciPy's A @ x."""
    rng = np.random.default_rng(0)
    M = sp.random_array((4, 4), density=0.5, format="csr", random_state=rng)
    x = rng.random(4)
    kern = compile_spmv(None)
    A, X = ct.asarray(M), ct.asarray(x)
    y = kern(A=A, x=X)
    assert np.allclose(np.asarray(y), M @ x)
    ours = [t / number * 1e6 for t in timeit.repeat(lambda: kern(A=A, x=X), number=number,
                                                     repeat=repeat)]
    theirs = [t / number * 1e6 for t in timeit.repeat(lambda: M @ x, number=number,
                                                       repeat=repeat)]
    return {
        "coiter_median_us": statistics.median(ours), "coiter_min_us": min(ours),
        "scipy_median_us": statistics.median(theirs), "scipy_min_us": min(theirs),
        "coiter_runs_us": ours, "scipy_runs_us": theirs, "number": number, "repeat": repeat,
        "shape": [4, 4], "nnz": int(M.nnz),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=25,
                        help="cold compiles per engine (>= 15, default 25)")
    parser.add_argument("--processes", type=int, default=15,
                        help="fresh processes per engine (>= 10, default 15)")
    parser.add_argument("--number", type=int, default=2000, help="calls per timeit run")
    parser.add_argument("--repeat", type=int, default=7, help="timeit runs")
    parser.add_argument("--engines", default="llvm,c", help="comma-separated (default llvm,c)")
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "compiler.json")
    args = parser.parse_args(argv)
    if args.samples < 15:
        parser.error("--samples must be at least 15")
    if args.processes < 10:
        parser.error("--processes must be at least 10")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]

    cold, warm, errors = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="coiter-bench-") as scratch:
        for engine in engines:
            print(f"cold compiles, {engine} engine ...", flush=True)
            try:
                cold[engine] = cold_compile(engine, args.samples, scratch)
            except Exception as error:  # recorded, not hidden
                errors[f"cold_{engine}"] = repr(error)
            print(f"fresh processes, warm disk cache, {engine} engine ...", flush=True)
            try:
                warm[engine] = warm_disk_fresh_process(engine, args.processes, scratch)
            except subprocess.CalledProcessError as error:
                errors[f"warm_{engine}"] = f"{error!r}\n{error.stderr}"
            except Exception as error:
                errors[f"warm_{engine}"] = repr(error)
    print("per-call overhead ...", flush=True)
    call = per_call(args.number, args.repeat)

    if "llvm" in cold:
        cold["llvm"]["target_ms"] = COLD_TARGET_MS
        cold["llvm"]["meets_target"] = cold["llvm"]["median_ms"] <= COLD_TARGET_MS
    if "llvm" in warm:
        warm["llvm"]["target_ms"] = WARM_PROCESS_TARGET_MS
        warm["llvm"]["meets_target"] = warm["llvm"]["median_ms"] <= WARM_PROCESS_TARGET_MS
    call["target_us"] = CALL_TARGET_US
    call["meets_target"] = call["coiter_median_us"] <= CALL_TARGET_US
    result = {
        "benchmark": "compiler", "expression": EXPR, "formats": FORMATS, "dtype": "float64",
        "default_engine": ct.compiler.default_engine(),
        "cold_compile": cold, "fresh_process_warm_disk": warm, "per_call_4x4": call,
        "errors": errors, "environment": environment(c_compiler=shutil.which(os.environ.get("CC", "cc"))), "build": build_info(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_results(args.output, result)

    ok = lambda flag: "yes" if flag else "**no**"  # noqa: E731
    print(f"\nCSR SpMV `{EXPR}`, float64 ({result['environment']['cpus']} CPUs)\n")
    print("| measurement | engine | median | min | target | met |")
    print("|---|---|---:|---:|---:|:-:|")
    for engine, r in cold.items():
        target = f"<= {COLD_TARGET_MS:g} ms" if engine == "llvm" else "-"
        met = ok(r["meets_target"]) if engine == "llvm" else "-"
        print(f"| compile, empty cache (memory + disk), median of {r['samples']} | {engine} "
              f"| {r['median_ms']:.1f} ms | {r['min_ms']:.1f} ms | {target} | {met} |")
    for engine, r in warm.items():
        target = f"<= {WARM_PROCESS_TARGET_MS:g} ms" if engine == "llvm" else "-"
        met = ok(r["meets_target"]) if engine == "llvm" else "-"
        print(f"| first compile in a fresh process, kernel on disk, median of "
              f"{r['processes']} | {engine} | {r['median_ms']:.2f} ms | {r['min_ms']:.2f} ms "
              f"| {target} | {met} |")
    print(f"| call of a cached kernel, 4 x 4 CSR (`kern(A=A, x=x)`) | {result['default_engine']} "
          f"| {call['coiter_median_us']:.1f} us | {call['coiter_min_us']:.1f} us "
          f"| <= {CALL_TARGET_US:g} us | {ok(call['meets_target'])} |")
    print(f"| SciPy `A @ x`, same matrix (context) | - | {call['scipy_median_us']:.1f} us "
          f"| {call['scipy_min_us']:.1f} us | - | - |")
    print()
    for engine, r in cold.items():
        print(f"first compile in the process ({engine}, engine start-up included): "
              f"{r['first_in_process_ms']:.1f} ms")
    for name, r in [*(("cold " + e, r) for e, r in cold.items()),
                    *(("warm " + e, r) for e, r in warm.items())]:
        for problem in r["problems"]:
            print(f"PROBLEM ({name}): {problem}")
    for name, error in errors.items():
        print(f"ERROR ({name}): {error}")
    print(f"results: {args.output}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
