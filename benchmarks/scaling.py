"""Parallel scaling of coiter's own kernels: each kernel and schedule timed with every thread
count of the run, interleaved, and the speedup over one thread (the scheduling issue's
targets: SpMV on a banded matrix of ~10 M nonzeros, SpGEMM and SpAdd with CSR results
assembled in parallel, and SpMV on a power-law matrix under two schedules).

Results are checked against SciPy before timing."""

import numpy as np

import coiter as ct

from .datasets import banded, power_law, rng_for, uniform
from .timing import measure_interleaved, time_call

# (case name, expression, formats, matrix builder name, schedule or None for the default)
CASES = [
    ("spmv banded", "y(i) = A(i,j) * x(j)", {"A": "csr"}, "banded", None),
    (
        "spgemm uniform A·A",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": "csr", "B": "csr", "C": "csr"},
        "uniform",
        None,
    ),
    (
        "spadd uniform A+B",
        "C(i,j) = A(i,j) + B(i,j)",
        {"A": "csr", "B": "csr", "C": "csr"},
        "uniform",
        None,
    ),
]
# SpMV on power-law matrices under three schedules: rows split into contiguous equal blocks
# (one per thread, TACO's CPU schedule), the default (dynamic row chunks), and the pos split
# (blocks of equal numbers of nonzeros). Rows come in random order, and sorted by length
# (longest first, as graphs ordered by degree are): the order decides whether equal row
# blocks hold equal work.
SPMV_SCHEDULES = [
    ("rows in static blocks", "split(i,i0,i1,256);parallelize(i0,cpu_thread,no_races,static)"),
    ("default (dynamic row chunks)", None),
    (
        "pos split (equal nonzeros)",
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,16384);parallelize(fp0,cpu_thread,atomics)",
    ),
]
for _kind, _label in (
    ("power_law", "power-law"),
    ("power_law_sorted", "power-law, rows by length"),
):
    CASES += [
        (f"spmv {_label}, {name}", "y(i) = A(i,j) * x(j)", {"A": "csr"}, _kind, schedule)
        for name, schedule in SPMV_SCHEDULES
    ]

# Rows and nonzeros per row of each case's matrix, by mode: "quick" stays small; "full" is
# the size (banded SpMV ~10 M nonzeros).
SIZES = {
    "smoke": {"banded": (20_000, 10), "uniform": (5_000, 5), "power_law": (20_000, 8)},
    "quick": {"banded": (400_000, 25), "uniform": (100_000, 10), "power_law": (400_000, 8)},
    "full": {"banded": (1_000_000, 10), "uniform": (200_000, 10), "power_law": (1_000_000, 8)},
}


def power_law_sorted(n, per_row, rng):
    """A power-law matrix with its rows ordered longest first."""
    matrix = power_law(n, per_row, rng)
    return matrix[np.argsort(-np.diff(matrix.indptr), kind="stable")]


BUILDERS = {
    "banded": banded,
    "uniform": uniform,
    "power_law": power_law,
    "power_law_sorted": power_law_sorted,
}


def _operands(name, kind, sizes, seed):
    n, per_row = sizes[kind.replace("_sorted", "")]
    a = BUILDERS[kind](n, per_row, rng_for(f"scaling-{kind.replace('_sorted', '')}", seed))
    if name.startswith("spmv"):
        x = rng_for("scaling-x", seed).random(n)
        return {"A": ct.asarray(a), "x": x}, a @ x
    b = BUILDERS[kind](n, per_row, rng_for(f"scaling-{kind}-b", seed))
    if name.startswith("spgemm"):
        return {"A": ct.asarray(a), "B": ct.asarray(a)}, a @ a
    return {"A": ct.asarray(a), "B": ct.asarray(b)}, a + b


def _check(result, expected):
    got = result.to_numpy() if not hasattr(expected, "toarray") else result.to_scipy()
    if hasattr(expected, "toarray"):
        difference = abs(got - expected).max() if got.nnz or expected.nnz else 0.0
    else:
        difference = float(np.max(np.abs(got - expected))) if got.size else 0.0
    if difference > 1e-9:
        raise AssertionError(f"coiter's result differs from SciPy's by {difference:g}")


def _kernel_call(kernel, operands):
    """The call to time: ``kernel`` on ``operands``."""
    return lambda: kernel(**operands)


def measure(mode, threads, policy, seed, log=print):
    sizes = SIZES[mode]
    previous = ct.get_num_threads()
    rows = []
    try:
        for name, expression, formats, kind, schedule in CASES:
            log(f"scaling: {name} ...")
            operands, expected = _operands(name, kind, sizes, seed)
            kernel = ct.compile(expression, formats=formats, schedule=schedule)
            row = {
                "case": name,
                "schedule": schedule or "default",
                "matrix": kind,
                "nnz": int(operands["A"].nnz),
                "seconds": {},
            }
            for count in threads:
                ct.set_num_threads(count)
                call = _kernel_call(kernel, operands)
                warmup, result = time_call(call)
                _check(result, expected)
                timing = measure_interleaved(
                    {"coiter": call}, policy, {"coiter": warmup}, warmup_rounds=1
                )["coiter"]
                row["seconds"][count] = timing.as_dict()
            base = row["seconds"][threads[0]]["median"]
            row["speedup"] = {count: base / t["median"] for count, t in row["seconds"].items()}
            rows.append(row)
    finally:
        ct.set_num_threads(previous)
    return rows


def markdown_lines(rows):
    if not rows:
        return []
    counts = list(rows[0]["seconds"])
    lines = [
        "| scaling (coiter, same run) | nonzeros | "
        + " | ".join(f"{c} thread(s)" for c in counts)
        + " | speedup |",
        "|---|--:|" + "--:|" * len(counts) + "--:|",
    ]
    for r in rows:
        times = " | ".join(f"{r['seconds'][c]['median'] * 1e3:.2f} ms" for c in counts)
        lines.append(f"| {r['case']} | {r['nnz']:,} | {times} | {r['speedup'][counts[-1]]:.2f}× |")
    return lines
