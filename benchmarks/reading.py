"""Reading text files: ``ct.read`` against fast_matrix_market and SciPy, same run, same files.

A random real general ``.mtx`` of ``--entries`` entries in random order, the same matrix's
``.mtx`` with its entries sorted by row (as a CSR matrix writes them), and a random 3-mode
``.tns`` are written once into a temporary folder. Then, at one thread and at all threads:

- each ``.mtx``: ``ct.read(path, format="coo")`` and ``ct.read(path)`` (CSR, the default)
  against ``fast_matrix_market.mmread`` and ``scipy.io.mmread``, the calls interleaved
  (one of each per round, the order rotated by one each round: ``measure_rotated``). The
  peers return the file's entries as COO triplets in file order; coiter's COO and CSR are
  sorted (by row, then column) with duplicates summed, so a shuffled file costs coiter a sort
  the peers do not do. Each of coiter's matrices is checked entry for entry against
  fast_matrix_market's first.
- ``.tns``: ``ct.read`` (COO) against ``fast_matrix_market.mmread`` of the shuffled ``.mtx``
  (the same entry count; no peer reads FROSTT files), and at one thread against
  ``numpy.loadtxt`` of the same file (how coiter parsed text bodies once); the tensor is
  checked against the one written.

Each ratio is the peer's median over coiter's (above 1: coiter is faster). The machine's
load average is recorded with the numbers.

    python -m benchmarks.reading [--entries N] [--output-dir DIR]
"""

import argparse
import os
import pathlib
import sys
import tempfile

import fast_matrix_market as fmm
import numpy as np
import scipy.io
import scipy.io._fast_matrix_market as scipy_fmm
import scipy.sparse as sp

import coiter as ct

from .environment import environment, write_results
from .timing import RepeatPolicy, Timing, measure_interleaved, time_call

# Reads take seconds: a few each, interleaved.
POLICY = RepeatPolicy(min_repeats=3, max_repeats=5, budget_s=6.0, cap_s=30.0)


def write_files(folder, entries, seed):
    """The .mtx and .tns files, and the tensor written into the .tns."""
    rng = np.random.default_rng(seed)
    n = 1_000_000
    matrix = sp.coo_array(
        (rng.standard_normal(entries), (rng.integers(0, n, entries), rng.integers(0, n, entries))),
        shape=(n, n),
    )
    mtx = folder / "matrix.mtx"
    fmm.mmwrite(mtx, matrix)
    sorted_mtx = folder / "sorted.mtx"
    fmm.mmwrite(sorted_mtx, matrix.tocsr())  # row by row
    coords = rng.integers(0, 1000, (entries, 3))
    values = rng.standard_normal(entries)
    tns = folder / "tensor.tns"
    tensor = ct.from_coords(coords, values, (1000, 1000, 1000), format="coo")
    ct.write(tns, tensor)
    return mtx, sorted_mtx, tns, tensor


def set_threads(threads):
    ct.set_num_threads(threads)
    fmm.PARALLELISM = threads
    scipy_fmm.PARALLELISM = threads


def same_matrix(ours, theirs):
    return (ours.to_scipy().tocsr() != theirs).nnz == 0


def same_entries(ours, written):
    (coords, values), (written_coords, written_values) = ours.coords(), written.coords()
    return np.array_equal(coords, written_coords) and np.array_equal(values, written_values)


def timed(label, contenders, check):
    """Times ``contenders`` (name -> call) interleaved after one checked warm-up call each."""
    warmup = {}
    for name, fn in contenders.items():
        seconds, result = time_call(fn)
        if name.startswith("ct.read") and not check(result):
            raise AssertionError(f"{label}: coiter's result differs from the peer's")
        del result
        warmup[name] = seconds
    timings = measure_rotated(contenders, warmup)
    return {name: t.as_dict() | {"runs": None} for name, t in timings.items()}


def measure_rotated(contenders, warmup):
    """name -> Timing of ``contenders``, one call of each per round (as many rounds as
    POLICY gives the slowest-to-fill), the order rotated by one each round. A read right after
    another reader's pays for what that one left behind: on the 2-core test machine the first
    read after ``scipy.io.mmread`` took 0.2-0.3 s more kernel time than the next, zeroing the
    new pages of its arrays. In a fixed order one contender would always be the one to pay."""
    wanted = {name: POLICY.repeats_for(seconds) for name, seconds in warmup.items()}
    names = list(contenders)
    runs = {name: [] for name in names}
    for round_ in range(max(wanted.values())):
        shift = round_ % len(names)
        order = [name for name in names[shift:] + names[:shift] if round_ < wanted[name]]
        one_each = RepeatPolicy(min_repeats=1, max_repeats=1, budget_s=0.0, cap_s=float("inf"))
        timings = measure_interleaved({name: contenders[name] for name in order}, one_each, warmup)
        for name, timing in timings.items():
            if isinstance(timing, Exception):
                raise timing
            runs[name].extend(timing.runs)
    return {name: Timing.of(times) for name, times in runs.items()}


def run(entries, seed=0):
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        mtx, sorted_mtx, tns, tensor = write_files(folder, entries, seed)
        reference = sp.csr_array(fmm.mmread(mtx))
        for threads in (1, os.cpu_count() or 1):
            set_threads(threads)
            cases = {}
            for file, path in (("mtx (shuffled)", mtx), ("mtx (sorted by row)", sorted_mtx)):
                cases[file] = timed(
                    file,
                    {
                        'ct.read(format="coo")': lambda path=path: ct.read(path, format="coo"),
                        "ct.read (csr)": lambda path=path: ct.read(path),
                        "fast_matrix_market": lambda path=path: fmm.mmread(path),
                        "scipy": lambda path=path: scipy.io.mmread(path),
                    },
                    lambda ours: same_matrix(ours, reference),
                )
            cases["tns"] = timed(
                "tns",
                {
                    'ct.read(format="coo")': lambda: ct.read(tns, format="coo"),
                    "fast_matrix_market (.mtx)": lambda: fmm.mmread(mtx),
                }
                # How coiter parsed text bodies once, single-threaded: timed once.
                | (
                    {"numpy.loadtxt": lambda: np.loadtxt(tns, comments="#")} if threads == 1 else {}
                ),
                lambda ours: same_entries(ours, tensor),
            )
            for file, timings in cases.items():
                ours = [name for name in timings if name.startswith("ct.read")]
                for call in ours:
                    coiter_s = timings[call]["median"]
                    for peer, timing in timings.items():
                        if peer in ours:
                            continue
                        row = {
                            "file": file,
                            "threads": threads,
                            "coiter": call,
                            "peer": peer,
                            "coiter_s": coiter_s,
                            "peer_s": timing["median"],
                            "ratio": timing["median"] / coiter_s,
                            "load_average": os.getloadavg(),
                        }
                        rows.append(row | {"timings": timings})
                        print(
                            f"{file} {threads} thread(s): {call} {coiter_s:6.2f} s   {peer} "
                            f"{timing['median']:6.2f} s   ratio {row['ratio']:5.2f}   "
                            f"load {row['load_average'][0]:.2f}",
                            flush=True,
                        )
    return rows


def markdown(rows, entries):
    lines = [
        f"# Reading {entries:,}-entry text files (ratio = peer time / coiter time)",
        "",
        "| file | threads | coiter | peer | coiter s | peer s | ratio | load average (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| .{r['file']} | {r['threads']} | `{r['coiter']}` | {r['peer']} | "
            f"{r['coiter_s']:.2f} | {r['peer_s']:.2f} | {r['ratio']:.2f} | "
            f"{r['load_average'][0]:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default=str(pathlib.Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    rows = run(args.entries, args.seed)
    out = pathlib.Path(args.output_dir)
    write_results(
        out / "reading.json",
        environment(entries=args.entries, fast_matrix_market=fmm.__version__, cases=rows),
    )
    (out / "reading.md").write_text(markdown(rows, args.entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
