"""The autoscheduler against today's default schedule and the best hand schedule of
docs/schedules.md (TACO's CPU schedules), on the kernels of benchmarks/, one thread; plus
``einsum("it,jt->ij", Y, Y)`` with a CSR ``Y`` against SciPy's ``Y @ Y.T``.

    python -m benchmarks.autoschedule [--budget 1.5] [--kernels SpMV,SpGEMM] [--scale 1]
                                      [--output benchmarks/results/autoschedule]

For each kernel: ``ct.autoschedule`` tunes with the default budget in a fresh tuning database
(the tuning time is the call's wall time), then the default, each hand schedule and
``schedule="auto"`` (which converts operands when the tuning says so) are timed interleaved
through ``ct.evaluate`` (so each pays the same per-call overhead), in passes of shuffled order
(measure_shuffled), and reported as ratios to the default. A second process then asks
``ct.autoschedule`` again with the same inputs: a database hit, timing nothing (its wall time
is reported). Results are checked against SciPy/NumPy.
"""

import argparse
import functools
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import coiter as ct
from coiter.autosched.pipeline import describe

from .environment import script_environment, write_script_results
from .timing import RepeatPolicy, Timing, measure_interleaved

# Many interleaved calls: the machine this runs on is shared, and bursts of load hit single calls.
# They come in PASSES passes, each interleaved in another random order (measure_shuffled), of
# 3-10 calls each: 18-60 calls in all.
PASSES = 6
PASS_POLICY = RepeatPolicy(min_repeats=3, max_repeats=10, budget_s=0.2, cap_s=0.5)


def _csr(n, m, per_row, seed):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, m, rows.size)
    A = sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, m))
    A.sum_duplicates()
    A.sort_indices()
    return A


def _tensor3(shape, nnz, seed):
    rng = np.random.default_rng(seed)
    coords = np.unique(np.stack([rng.integers(0, s, nnz) for s in shape], axis=1), axis=0)
    return ct.from_coords(coords, rng.random(len(coords)), shape, format="dss")


def kernels(scale=1.0):
    """name -> (statement, operands, result format, hand schedules from docs/schedules.md,
    reference function of the operands); ``scale`` shrinks every extent (a smoke run)."""

    def n(extent):
        return max(16, int(extent * scale))

    rng = np.random.default_rng(0)
    A = _csr(n(20_000), n(20_000), 10, 1)
    M = _csr(n(5_000), n(5_000), 10, 2)
    G = _csr(n(3_000), n(3_000), 8, 3)
    S = _csr(n(2_000), n(2_000), 20, 7)  # SDDMM's result is dense (TACO's schedule needs one)
    B3 = _tensor3((n(200),) * 3, n(40_000), 4)
    dense_b3 = B3.to_numpy()
    Y = _csr(n(4_000), n(1_000), 8, 5)
    hand_spmv = ["split(i,i0,i1,16);reorder(i0,i1,j);parallelize(i0,cpu_thread,no_races)"]
    return {
        "SpMV": (
            "y(i) = A(i,j) * x(j)",
            {"A": A, "x": rng.random(A.shape[1])},
            None,
            hand_spmv
            + [
                "split(i,i0,i1,32);reorder(i0,i1,j);parallelize(i0,cpu_thread,no_races)",
                "fuse(i,j,k);pos(k,kpos,A(i,j));split(kpos,kpos0,kpos1,16);"
                "parallelize(kpos0,cpu_thread,atomics)",
            ],
            lambda o: o["A"] @ o["x"],
        ),
        "SpMM": (
            "C(i,k) = A(i,j) * B(j,k)",
            {"A": M, "B": rng.random((M.shape[1], 32))},
            None,
            [
                "split(i,i0,i1,16);pos(j,jpos,A(i,j));split(jpos,jpos0,jpos1,8);"
                "reorder(i0,i1,jpos0,k,jpos1);parallelize(i0,cpu_thread,no_races);"
                "parallelize(k,cpu_vector,ignore_races)",
                "split(i,i0,i1,16);pos(j,jpos,A(i,j));split(jpos,jpos0,jpos1,8);"
                "reorder(i0,i1,jpos0,k,jpos1);parallelize(i0,cpu_thread,no_races)",
            ],
            lambda o: o["A"] @ o["B"],
        ),
        "SDDMM": (
            "A(i,k) = B(i,k) * C(i,j) * D(j,k)",
            {"B": S, "C": rng.random((S.shape[0], 16)), "D": rng.random((16, S.shape[1]))},
            "dense",
            [
                "split(i,i0,i1,16);pos(k,kpos,B(i,k));split(kpos,kpos0,kpos1,8);"
                "reorder(i0,i1,kpos0,j,kpos1);parallelize(i0,cpu_thread,no_races);"
                "parallelize(kpos1,cpu_vector,parallel_reduction)"
            ],
            lambda o: o["B"].multiply(o["C"] @ o["D"]).toarray(),
        ),
        "SpGEMM": (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": G, "C": _csr(G.shape[1], G.shape[1], 8, 6)},
            None,
            [
                "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw])",
                "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],hashed)",
            ],
            lambda o: o["B"] @ o["C"],
        ),
        "MTTKRP": (
            "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)",
            {"B": B3, "C": rng.random((B3.shape[1], 16)), "D": rng.random((B3.shape[2], 16))},
            "dense",
            [
                "split(i,i1,i2,16);reorder(i1,i2,k,l,j);parallelize(i1,cpu_thread,no_races)",
                "reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j);split(i,i0,i1,32);"
                "parallelize(i0,cpu_thread,no_races)",
            ],
            lambda o: np.einsum("ikl,lj,kj->ij", dense_b3, o["D"], o["C"]),
        ),
        "TTV": (
            "A(i,j) = B(i,j,k) * c(k)",
            {"B": B3, "c": rng.random(B3.shape[2])},
            "dense",
            [
                "fuse(i,j,f);pos(f,fpos,B(i,j,k));split(fpos,chunk,fpos2,16);reorder(chunk,fpos2,k);"
                "parallelize(chunk,cpu_thread,no_races)"
            ],
            lambda o: np.einsum("ijk,k->ij", dense_b3, o["c"]),
        ),
        "TTM": (
            "A(i,j,l) = B(i,j,k) * C(k,l)",
            {"B": B3, "C": rng.random((B3.shape[2], 8))},
            "dense",
            [
                "fuse(i,j,f);pos(f,fpos,B(i,j,k));split(fpos,chunk,fpos2,16);pos(k,kpos,B(i,j,k));"
                "split(kpos,kpos1,kpos2,8);reorder(chunk,fpos2,kpos1,l,kpos2);"
                "parallelize(chunk,cpu_thread,no_races);parallelize(kpos2,cpu_vector,parallel_reduction)"
            ],
            lambda o: np.einsum("ijk,kl->ijl", dense_b3, o["C"]),
        ),
        "einsum YYt": (
            "C(i,j) = A(i,t) * B(j,t)",
            {"A": Y, "B": Y},
            None,
            [],
            lambda o: o["A"] @ o["B"].T,
        ),
    }


class CpuTimed:
    """``fn``, recording the CPU time of this thread in each call (``runs``)."""

    def __init__(self, fn):
        self.fn = fn
        self.runs = []

    def __call__(self):
        start = time.thread_time()
        result = self.fn()
        self.runs.append(time.thread_time() - start)
        return result


def measure_shuffled(callables, warm, seed=0):
    """(name -> Timing of wall time, name -> Timing of CPU time) of ``callables``, their runs
    pooled over PASSES interleaved passes, each in another random order. A call runs slower
    after some calls than after others (a slow hand schedule evicts the caches, a kernel
    writing a large dense result allocates where another's memory was freed): in one fixed
    order every call would have the same predecessor in every round, and the same schedule
    given twice measured 0.67-1.0x itself. The CPU time of the calling thread is the
    kernels' time on one thread without the time a busy machine's other processes take the
    core away, which doubled single calls at a load of 3-4 on 2 cores."""
    rng = random.Random(seed)
    wall = {name: [] for name in callables}
    cpu = {name: CpuTimed(fn) for name, fn in callables.items()}
    for _ in range(PASSES):
        names = list(callables)
        rng.shuffle(names)
        timings = measure_interleaved({n: cpu[n] for n in names}, PASS_POLICY, warm)
        for name, timing in timings.items():
            if isinstance(timing, Exception):
                raise timing
            wall[name] += timing.runs
    return (
        {name: Timing.of(runs) for name, runs in wall.items()},
        {name: Timing.of(timed.runs) for name, timed in cpu.items()},
    )


def _evaluate(stmt, out_format, schedule, conversions, operands):
    given = {
        n: ct.asarray(t).asformat(conversions[n]) if n in conversions else t
        for n, t in operands.items()
    }
    return ct.evaluate(stmt, out_format=out_format, schedule=schedule, **given)


def _dense(value):
    if isinstance(value, ct.Tensor):
        return value.to_numpy()
    return value.toarray() if sp.issparse(value) else np.asarray(value)


def selected(names, scale):
    """The kernels named (all when ``names`` is empty), at ``scale``."""
    found = kernels(scale)
    unknown = set(names) - set(found)
    if unknown:
        raise SystemExit(f"unknown kernels {sorted(unknown)}; they are {sorted(found)}")
    return {k: v for k, v in found.items() if not names or k in names}


def tune_all(cases, budget):
    """{kernel: (tuning seconds, report, chosen program)} in this process."""
    tuned = {}
    for name, (stmt, operands, out_format, _, _) in cases.items():
        start = time.perf_counter()
        program, report = ct.autoschedule(stmt, budget=budget, out_format=out_format, **operands)
        tuned[name] = (time.perf_counter() - start, report, program)
    return tuned


def second_process(names, scale, budget):
    """Ask again in a fresh process (same cache directory): seconds per call, and hits."""
    script = (
        "import json, sys, time; import coiter as ct; from benchmarks.autoschedule import selected;"
        "ct.set_num_threads(1); out = {}\n"
        "for name, (stmt, ops, fmt, _, _) in selected(json.loads(sys.argv[1]), "
        "float(sys.argv[2])).items():\n"
        "    t = time.perf_counter()\n"
        "    _, r = ct.autoschedule(stmt, budget=float(sys.argv[3]), out_format=fmt, **ops)\n"
        "    out[name] = [time.perf_counter() - t, r.from_database, len(r.measurements)]\n"
        "print(json.dumps(out))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(names), str(scale), str(budget)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=ct.autosched.DEFAULT_BUDGET)
    parser.add_argument("--output", default="benchmarks/results/autoschedule")
    parser.add_argument("--kernels", default="", help="comma-separated names (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="extents times this")
    args = parser.parse_args(argv)
    names = [k for k in args.kernels.split(",") if k]
    cases = selected(names, args.scale)
    load = os.getloadavg()
    os.environ["COITER_CACHE_DIR"] = tempfile.mkdtemp(prefix="coiter-autoschedule-")
    ct.set_num_threads(1)
    tuned = tune_all(cases, args.budget)
    again = second_process(names, args.scale, args.budget)
    rows = []
    for name, (stmt, operands, out_format, hand, reference) in cases.items():
        expected = _dense(reference(operands))
        tuning_seconds, report, program = tuned[name]
        # "tuned": the chosen schedule given explicitly (its conversions made in the call), the
        # schedule's worth; "auto": schedule="auto", which adds the statistics of each call.
        calls = {"default": "default", "tuned": report.schedule, "auto": "auto"}
        calls.update({f"hand {k + 1}": text for k, text in enumerate(hand)})
        callables, warm = {}, {}
        for label, schedule in calls.items():
            if label == "tuned" and not isinstance(program, ct.Schedule):
                # A frontier member of two kernels (a Pipeline), called like a kernel.
                call = functools.partial(program, **operands)
            else:
                call = functools.partial(
                    _evaluate,
                    stmt,
                    out_format,
                    schedule,
                    report.conversions if label == "tuned" else {},
                    operands,
                )
            result = call()  # (compiles the first time: the second call's time is the warm one)
            np.testing.assert_allclose(_dense(result), expected, rtol=1e-9, err_msg=label)
            del result
            start = time.perf_counter()
            call()
            warm[label] = time.perf_counter() - start
            callables[label] = call
        if name == "einsum YYt":
            A = operands["A"]
            callables["scipy"] = lambda A=A: A @ A.T
            warm["scipy"] = 0.01
        # One thread: the CPU time decides (measure_shuffled); the wall time is kept beside it.
        wall, cpu = measure_shuffled(callables, warm)
        seconds = {k: t.median for k, t in cpu.items()}
        best_hand = min((v for k, v in seconds.items() if k.startswith("hand")), default=None)
        row = {
            "kernel": name,
            "statement": stmt,
            "default_ms": seconds["default"] * 1e3,
            "tuned_ms": seconds["tuned"] * 1e3,
            "auto_ms": seconds["auto"] * 1e3,
            "tuned_vs_default": seconds["default"] / seconds["tuned"],
            "tuned_vs_best_hand": None if best_hand is None else best_hand / seconds["tuned"],
            "best_hand_ms": None if best_hand is None else best_hand * 1e3,
            "auto_vs_default": seconds["default"] / seconds["auto"],
            "auto_vs_default_wall": wall["default"].median / wall["auto"].median,
            "wall_ms": {k: t.median * 1e3 for k, t in wall.items()},
            "auto_vs_best_hand": None if best_hand is None else best_hand / seconds["auto"],
            "tuning_s": tuning_seconds,
            "schedules_timed": len(report.measurements),
            "strategy": report.strategy,
            "chosen": describe(report.schedule),
            "conversions": report.conversions,
            "second_run_s": again[name][0],
            "second_run_hit": again[name][1],
            "second_run_timed": again[name][2],
        }
        if "scipy" in seconds:
            row["scipy_ms"] = seconds["scipy"] * 1e3
            row["auto_vs_scipy"] = seconds["scipy"] / seconds["auto"]
        rows.append(row)
        print(json.dumps(row))
    env = script_environment(argv, threads=1, budget=args.budget, load_average_at_start=load)
    write_script_results(args.output, rows, env, markdown)
    return rows


def _load(env):
    """The 1-minute load average at the start and the end of the run."""
    start, end = env["load_average_at_start"][0], env["load_average_at_end"][0]
    return f"{start:.2f} → {end:.2f}"


def markdown(rows, env):
    lines = [
        "# Autoscheduler: tuned vs default vs TACO's hand schedules (one thread)",
        "",
        f"`python -m benchmarks.autoschedule` ({env.get('arguments') or 'defaults'}), "
        f"budget {env['budget']} s, {env.get('date', '')}, load average "
        f"{_load(env)}. Times are medians of the calling thread's CPU time in interleaved "
        f"`ct.evaluate` calls, in {PASSES} passes of random order (ratios > 1: the tuned schedule "
        "is faster; *auto/default wall*: the same ratio of wall-time medians, which the "
        "machine's other processes inflate at random). *tuned* passes the chosen "
        "schedule explicitly (converting operands in the call when it says so): the schedule's "
        'worth; *auto* is `schedule="auto"`, which also computes the operands\' statistics on '
        "every call.",
        "",
        "| kernel | default ms | tuned ms | auto ms | best hand ms | tuned/default | "
        "auto/default | auto/default wall | tuned/best hand | tuning s | timed | "
        "2nd run s (hit) | chosen |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        hand = "—" if r["best_hand_ms"] is None else f"{r['best_hand_ms']:.3g}"
        vs_hand = "—" if r["tuned_vs_best_hand"] is None else f"{r['tuned_vs_best_hand']:.2f}×"
        conv = "".join(f" [{n}→{f}]" for n, f in r["conversions"].items())
        lines.append(
            f"| {r['kernel']} | {r['default_ms']:.3g} | {r['tuned_ms']:.3g} | "
            f"{r['auto_ms']:.3g} | {hand} | {r['tuned_vs_default']:.2f}× | "
            f"{r['auto_vs_default']:.2f}× | {r['auto_vs_default_wall']:.2f}× | {vs_hand} | "
            f"{r['tuning_s']:.2f} | "
            f"{r['schedules_timed']} | {r['second_run_s']:.3f} ({r['second_run_hit']}) | "
            f"`{r['chosen'] or '(default)'}`{conv} |"
        )
    scipy_rows = [r for r in rows if "scipy_ms" in r]
    for r in scipy_rows:
        lines += [
            "",
            f"{r['kernel']}: SciPy `Y @ Y.T` {r['scipy_ms']:.3g} ms; coiter with "
            f'`schedule="auto"` {r["auto_ms"]:.3g} ms (SciPy/coiter {r["auto_vs_scipy"]:.2f}); '
            f"today's default {r['default_ms']:.3g} ms.",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
