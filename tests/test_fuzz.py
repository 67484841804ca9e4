"""Differential fuzzing (issue 22): seeded random cases of fuzz_cases.py, each with a correct
result or a typed coiter error, never another exception, a crash or a hang.

The cases run in child interpreters, a batch of cases per child, so that a crash or a hang
fails the test with the number of the case that caused it (the child prints each number
before running the case). The smoke test runs a few hundred cases in the normal suite; the
slow one runs COITER_FUZZ_CASES cases in all (default 100000), shared among the categories
as fuzz_cases.SHARES says:

    COITER_FUZZ_CASES=100000 python -m pytest -m slow tests/test_fuzz.py

COITER_FUZZ_JOBS runs that many children at once (default 1); COITER_FUZZ_START shifts the
case numbers, for a run that explores cases no run has tried. A failure prints the command
that reruns its case alone (``cd tests && python fuzz_cases.py <category> <number>``).
"""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import fuzz_cases

HERE = os.path.dirname(os.path.abspath(__file__))
# Cases per child: large for kernels, since each child first loads its pool's kernels from
# the disk cache (shared by the children of one session), small where a case is cheap anyway.
BATCH = {"kernel": 2500, "corrupt": 1500, "expr": 2000, "schedule": 2000, "file": 4000}
MAX_REPORTED = 25


def run_batch(category, start, count, pool):
    """Outcome counts and failure messages of cases start..start+count-1, run in a child."""
    child = subprocess.Popen(
        [
            sys.executable,
            os.path.join(HERE, "fuzz_cases.py"),
            "--child",
            category,
            str(start),
            str(count),
            str(pool),
        ],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # faulthandler in the child ends a case that runs past CASE_SECONDS; this timeout only
    # guards against a child that stops printing altogether.
    try:
        stdout, stderr = child.communicate(timeout=fuzz_cases.CASE_SECONDS * 2 + count * 5)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
    outcomes, failures, running = {}, [], None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if "begin" in record:
            running = record["begin"]
        else:
            running = None
            outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
            if record["failure"]:
                failures.append(
                    f"{category} case {record['end']}: {record['failure']}\n"
                    f"  rerun: {fuzz_cases.repro(category, record['end'], pool)}"
                )
    if child.returncode != 0:
        where = (
            "before its first case"
            if running is None and not outcomes
            else (f"in case {running}" if running is not None else "after its last case")
        )
        failures.append(
            f"{category}: the child running cases {start}..{start + count - 1} died "
            f"(exit status {child.returncode}: a crash, or killed as hung) {where}"
            + (
                f"\n  rerun: {fuzz_cases.repro(category, running, pool)}"
                if running is not None
                else ""
            )
            + f"\n  stderr: {stderr[-3000:]}"
        )
    return outcomes, failures


def run_fuzz(counts, pool, jobs=1, start=0):
    """Run ``counts[category]`` cases of each category; fail with every failure found."""
    tasks = []
    for category, count in counts.items():
        for first in range(start, start + count, BATCH[category]):
            tasks.append((category, first, min(BATCH[category], start + count - first), pool))
    began = time.time()

    def run(task):
        outcomes, found = run_batch(*task)
        # Progress of long runs (visible with -s): one line per finished batch.
        print(
            f"fuzz: {task[0]} cases {task[1]}..{task[1] + task[2] - 1} done after "
            f"{time.time() - began:.0f} s: {outcomes}, {len(found)} failures",
            flush=True,
        )
        return outcomes, found

    with ThreadPoolExecutor(max_workers=jobs) as pool_of_children:
        results = list(pool_of_children.map(run, tasks))
    summary, failures = {}, []
    for (category, *_), (outcomes, found) in zip(tasks, results):
        for outcome, n in outcomes.items():
            summary.setdefault(category, {}).setdefault(outcome, 0)
            summary[category][outcome] += n
        failures += found
    total = sum(n for outcomes in summary.values() for n in outcomes.values())
    print(f"\nfuzz: {total} cases in {time.time() - began:.0f} s: {json.dumps(summary)}")
    assert total == sum(counts.values()) or failures, (total, counts)
    assert not failures, (
        f"{len(failures)} failing fuzz cases; the first {MAX_REPORTED}:\n"
        + "\n".join(failures[:MAX_REPORTED])
    )
    return summary


def test_fuzz_smoke():
    # A few hundred cases in about half a minute: few kernel cases (each new pool entry
    # compiles two kernels), many of the cheap ones.
    summary = run_fuzz(
        {"kernel": 40, "corrupt": 60, "expr": 150, "schedule": 100, "file": 250},
        pool=fuzz_cases.SMOKE_KERNEL_POOL,
    )
    # The cases reach what they are for: results computed and inputs refused.
    assert summary["kernel"].get("computed", 0) > 10
    assert summary["corrupt"].get("refused", 0) > 10
    assert summary["file"].get("refused", 0) > 100 and summary["file"].get("read", 0) > 10


@pytest.mark.slow
def test_fuzz_many():
    total = int(os.environ.get("COITER_FUZZ_CASES", "100000"))
    counts = {category: int(total * share) for category, share in fuzz_cases.SHARES.items()}
    counts["kernel"] += total - sum(counts.values())
    run_fuzz(
        counts,
        pool=fuzz_cases.KERNEL_POOL,
        jobs=int(os.environ.get("COITER_FUZZ_JOBS", "1")),
        start=int(os.environ.get("COITER_FUZZ_START", "0")),
    )


# -- past findings, rerun as explicit cases (each failed before its fix) -------------------------


@pytest.mark.parametrize(
    "category,number,outcome",
    [
        ("expr", 8, "computed"),  # "R(i) = ++++...x(i)" (10^5 signs): RecursionError
        ("expr", 10, "refused"),  # "R(i) = ----...x(i)" (5000 signs): RecursionError
        ("expr", 21, "computed"),  # 100 x "x(i) +": minutes in the iteration lattice
        ("file", 14, "refused"),  # truncated .mtx.gz: EOFError
        ("file", 50, "refused"),  # corrupt deflate stream in a .gz: zlib.error
        ("file", 74, "refused"),  # a gzip header with an unknown method: BadGzipFile
        ("file", 21, "refused"),  # .npz with a bad local header: BadZipFile
        ("file", 42, "refused"),  # .npz with an entry offset past the end: OSError
        ("file", 529, "refused"),  # .npz flag bits zipfile does not support: NotImplementedError
        ("file", 900, "refused"),  # .npz entry declaring 2**40 int64s: MemoryError (8 TiB)
        ("file", 1502, "refused"),  # .npz shape entry of two dimensions: TypeError
        ("file", 1319, "refused"),  # .npz values of dtype <U1: TypeError
        ("file", 3204, "refused"),  # .npz entry with a damaged .npy header: TokenError
        ("file", 4277, "refused"),  # .npz entry flagged as encrypted: RuntimeError
        ("schedule", 8, "refused"),  # schedule text with a lone surrogate: TypeError from pybind11
        ("expr", 300292, "refused"),  # "R(T,j) = T(i,j,k) * x(k)": auto's estimate, KeyError 'T'
        ("expr", 300777, "refused"),  # "R(ij) = ...": an index only the result reads, KeyError
        ("expr", 304399, "computed"),  # "* 0.1e9995" printed as "inf", read back as a tensor
        # precompute(1.5 * A(j,k),[j],[jw]) on "R(k) = 1.5 * A(j,k)": "j has no extent"
        ("kernel", 2, "computed"),
        ("file", 501780, "read"),  # a .tns of shape (9.2e15, 2, 4): the harness densified it
        # DIA x ELL into a hashed vector, C engine: zeros (GCC's loop if-conversion, AVX-512)
        ("kernel", 800236, "computed"),
        # R(k) = 1.5 * sum(i, A(j,i) * B(j,k)) + 1.5 into a hashed vector: the workspace's
        # unsorted list merged with the dimension skipped coordinates (both engines)
        ("kernel", 1102527, "computed"),
        # R = 1.5 * max(l, A * B(k,i,l) * C(l,k)), B in COO, C in DIA: a run's end read
        # outside the diagonal check that declared it (C code that did not compile)
        ("kernel", 1200077, "computed"),
        # R(k,i,j) = A(k,i) * B(k) * C * D(k,j), B hashed: auto's first kernel w(k,i) = A * B
        # walked B's buckets above w's appended rows and laid them out of order (both engines)
        ("kernel", 2624967, "computed"),
    ],
)
def test_past_findings(category, number, outcome):
    # In process: these raised untyped Python exceptions or took minutes; none crashed.
    assert fuzz_cases.run_case(category, number) == outcome
