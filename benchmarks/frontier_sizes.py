"""Frontier sizes of the autoscheduler's asymptotic stage for the paper's six kernels
(Ahrens et al., PLDI 2022 §5, formats as there), with the time to build each frontier,
next to the paper's table (Fig. 6).

For each kernel: the minimum-depth candidates coiter enumerates, how many lower to schedules
that pass coiter's legality check, the frontier among those, and the seconds
``coiter.autosched.frontier`` takes (enumeration, costs, lowering with legality checks and
the Pareto filter), the median of ``--repeat`` builds, with the process pinned to one core
(the stage runs on one thread; the issue asks for under 10 s on one core). The paper's
columns are its full CIN-P universe and its TACO-restricted one; the differences are
explained in docs/autoscheduling-asymptotic.md ("Frontier sizes").
"""

import argparse
import os
import statistics
import time
from pathlib import Path

from coiter.autosched import frontier

from .environment import script_environment, write_script_results

RESULTS = Path(__file__).resolve().parent / "results"
LIMIT_S = 10.0  # each frontier must build in under this (issue 18)

# name: (statement, formats, paper: min-depth, undominated, TACO min-depth, TACO undominated)
KERNELS = {
    "SpMV": ("a(i) = B(i,j) * c(j)", {"B": "ds"}, (8, 4, 4, 4)),
    "SpMV2": ("a(i) = B(i,j) * C(j,k) * d(k)", {"B": "ds", "C": "ds"}, (144, 28, 24, 16)),
    "SpMTTKRP": (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"A": "ds", "B": "dss", "C": "ds", "D": "ds"},
        (3_631_104, None, 768, 23),  # None: the paper's filter timed out
    ),
    "SpGEMM": ("A(i,j) = B(i,k) * C(k,j)", {"A": "ds", "B": "ds", "C": "ds"}, (96, 12, 16, 4)),
    "SpGEMM2": (
        "A(i,j) = B(i,k) * C(k,l) * D(l,j)",
        {"A": "ds", "B": "ds", "C": "ds", "D": "ds"},
        (20_736, 292, 32, 2),
    ),
    "SpGEMMH": (
        "A(i,j) = B(i,k) * C(k,j) * D(k,j)",
        {"A": "ds", "B": "ds", "C": "ds", "D": "ds"},
        (102_272, 204, 336, 4),
    ),
}


def measure(name, repeat):
    statement, formats, paper = KERNELS[name]
    seconds, built = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        built = frontier(statement, formats=formats)
        seconds.append(time.perf_counter() - start)
    assert built is not None
    lowered = [c for c in built.candidates if c.lowered]
    return {
        "kernel": name,
        "statement": statement,
        "formats": formats,
        "minimum_depth": built.minimum_depth,
        "candidates": len(built.candidates),
        "lowered": len(lowered),
        "frontier": len(built.members),
        "distinct_costs": len(built.cost_classes),
        "two_kernel_members": sum(len(m.stages) == 2 for m in built.members),
        "build_s": statistics.median(seconds),
        "build_s_max": max(seconds),
        "under_limit": max(seconds) < LIMIT_S,
        "paper": dict(
            zip(
                ("min_depth", "undominated", "taco_min_depth", "taco_undominated"),
                paper,
                strict=True,
            )
        ),
    }


def _count(value):
    return "timed out" if value is None else f"{value:,}"


def markdown(rows, env):
    lines = [
        "# Asymptotic frontier sizes: coiter against the paper's table",
        "",
        f"`python -m benchmarks.frontier_sizes {env.get('arguments', '')}`".replace(" `", "`"),
        "",
        f"Run {env.get('date', '')} on {env['processor']}, {env['cpus']} CPUs, "
        f"load average at the end {tuple(round(x, 2) for x in env['load_average_at_end'])}. "
        f"Build: median seconds of the repeated builds of one frontier, pinned to core "
        f"{env.get('pinned_to_core')}. "
        "Paper: its full CIN-P universe / frontier, then its TACO-restricted ones "
        "(Ahrens et al., PLDI 2022, Fig. 6). The differences are explained in "
        "docs/autoscheduling-asymptotic.md.",
        "",
        "| kernel | min depth | candidates | lowered | frontier | distinct costs "
        "| two-kernel members | build (s) "
        "| paper min-depth | paper frontier | paper TACO min-depth | paper TACO frontier |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        paper = row["paper"]
        lines.append(
            f"| {row['kernel']} | {row['minimum_depth']} | {row['candidates']:,} "
            f"| {row['lowered']:,} "
            f"| {row['frontier']} | {row['distinct_costs']} | {row['two_kernel_members']} "
            f"| {row['build_s']:.3f} "
            f"| {_count(paper['min_depth'])} | {_count(paper['undominated'])} "
            f"| {_count(paper['taco_min_depth'])} | {_count(paper['taco_undominated'])} |"
        )
    slowest = max(rows, key=lambda r: r["build_s_max"])
    lines += [
        "",
        f"Slowest build: {slowest['kernel']}, {slowest['build_s_max']:.3f} s "
        f"({'under' if slowest['under_limit'] else 'OVER'} the {LIMIT_S:.0f} s limit).",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "frontier-sizes"))
    args = parser.parse_args(argv)
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    rows = []
    for name in args.kernels:
        row = measure(name, args.repeat)
        sizes = f"{row['candidates']} candidates, {row['frontier']} on the frontier"
        print(f"{name}: {sizes}, {row['build_s']:.3f} s")
        rows.append(row)
    write_script_results(args.output, rows, script_environment(argv, pinned_to_core=core), markdown)


if __name__ == "__main__":
    main()
