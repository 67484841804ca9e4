"""The suite's entry point: ``python -m benchmarks [--quick | --smoke] [options]``.

Runs, in one process and on the same data: the STREAM-triad probe, every kernel for every
peer (checked, then timed) on every data set, each kernel's first call in a fresh process
(one child process per kernel and data set), compile latency, and packing; writes
``<mode>.json``, ``<mode>.md`` and the plots ``<mode>_speedup.png`` and
``<mode>_spmv_bandwidth.png`` into ``--output-dir`` (default ``benchmarks/results``).

Modes (``quick`` is meant to finish in under 5 minutes on 2 busy cores, ``full`` in under
45; ``smoke`` is the tiny configuration the tests run end to end):
"""

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import coiter as ct

from . import compile_latency, packing, paired, report, scaling, stream
from .datasets import (
    FROSTT_BY_NAME,
    FROSTT_SET,
    SPMV_BY_NAME,
    SPMV_SET,
    generate_matrix,
    generate_tensor,
    read_mtx_folder,
)
from .environment import build_info, environment, write_results
from .kernels import KERNELS, select
from .peers import make_peers
from .suite import run_suite
from .timing import RepeatPolicy

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_SECTIONS = ("stream", "kernels", "first_call", "scaling", "compile", "packing")
SECTIONS = (*DEFAULT_SECTIONS, "paired")


@dataclass(frozen=True)
class Mode:
    matrices: tuple  # (name, scale) pairs from SPMV_SET
    tensors: tuple  # (name, scale) pairs from FROSTT_SET
    policy: RepeatPolicy
    compile_samples: int
    compile_processes: int
    call_number: int
    packing_nnz: int
    stream_elements: int | None  # None: four times the last-level cache per array
    paired_calls: int  # alternating calls of each peer in the paired section
    sections: tuple  # what runs when --sections is not given


MODES = {
    # One matrix per structure class, scaled to a few hundred thousand nonzeros.
    "quick": Mode(
        matrices=(
            ("bcsstk17", 1),
            ("rma10", 8),
            ("mac_econ_fwd500", 4),
            ("webbase-1M", 8),
            ("hypersparse-1M", 8),
        ),
        tensors=(("nell-2", 8), ("vast-2015-mc1-3d", 16)),
        policy=RepeatPolicy(min_repeats=3, max_repeats=9, budget_s=0.1, cap_s=0.5),
        compile_samples=10,
        compile_processes=5,
        call_number=1000,
        packing_nnz=1_000_000,
        stream_elements=None,
        paired_calls=100,
        sections=DEFAULT_SECTIONS,
    ),
    # The whole SpMV set at its real sizes; FROSTT-like tensors at a quarter of each mode.
    "full": Mode(
        matrices=tuple((spec.name, 1) for spec in SPMV_SET),
        tensors=tuple((spec.name, 4) for spec in FROSTT_SET),
        policy=RepeatPolicy(min_repeats=5, max_repeats=25, budget_s=1.0, cap_s=6.0),
        compile_samples=25,
        compile_processes=15,
        call_number=2000,
        packing_nnz=10_000_000,
        stream_elements=None,
        paired_calls=400,
        sections=DEFAULT_SECTIONS,
    ),
    # Tiny: every code path once, for the tests; the first calls (a process each) only
    # when named in --sections.
    "smoke": Mode(
        matrices=(("bcsstk17", 64), ("webbase-1M", 2048)),
        tensors=(("nell-2", 32),),
        policy=RepeatPolicy(min_repeats=1, max_repeats=2, budget_s=0.01, cap_s=0.1),
        compile_samples=2,
        compile_processes=1,
        call_number=10,
        packing_nnz=10_000,
        stream_elements=1_000_000,
        paired_calls=3,
        sections=tuple(s for s in DEFAULT_SECTIONS if s != "first_call"),
    ),
}
__doc__ += "".join(
    f"\n- ``{name}``: {len(mode.matrices)} matrices, {len(mode.tensors)} tensors"
    for name, mode in MODES.items()
)


def all_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0]
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_const",
        const="quick",
        dest="mode",
        help="one matrix per structure class, scaled down (< 5 min)",
    )
    size.add_argument(
        "--smoke",
        action="store_const",
        const="smoke",
        dest="mode",
        help="tiny data, one or two calls each (for tests)",
    )
    parser.set_defaults(mode="full")
    parser.add_argument(
        "--mtx",
        type=Path,
        action="append",
        default=[],
        help="also run on every .mtx matrix under this folder (repeatable)",
    )
    parser.add_argument(
        "--matrices",
        help="comma-separated subset of the mode's generated matrices "
        "(their names without the scale: bcsstk17,cant); no tensors then",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        help="alternating calls per peer in the paired section "
        "(default: 400 in full mode, 100 in quick)",
    )
    parser.add_argument(
        "--only-mtx",
        action="store_true",
        help="run on the --mtx matrices only (no generated matrices)",
    )
    parser.add_argument(
        "--kernels",
        help=f"comma-separated subset of {[k.name for k in KERNELS]}; "
        "a family name (spadd2, spadd3, multiply) stands for all its patterns",
    )
    parser.add_argument(
        "--peers", help="comma-separated subset of coiter,coiter-scipy,scipy,sparse,tensora,mkl"
    )
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        help=f"thread counts (default 1 and all cores: 1 {all_cores()})",
    )
    parser.add_argument(
        "--sections",
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: "
        f"{','.join(DEFAULT_SECTIONS)}; smoke mode leaves out first_call, "
        "which starts a process per kernel and data set and needs kernels; "
        "paired: coiter and SciPy alternating many times on one thread, with a "
        "confidence interval on the ratio; its kernels are --kernels, default spmv_csr; "
        "--peers coiter-scipy pairs coiter's calls on tensors with its calls on the "
        "SciPy matrices instead)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", type=Path, default=RESULTS)
    parser.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    args = parser.parse_args(argv)
    args.sections = (
        set(args.sections.split(",")) if args.sections else set(MODES[args.mode].sections)
    )
    if args.sections - set(SECTIONS):
        parser.error(f"unknown sections {sorted(args.sections - set(SECTIONS))}")
    if "first_call" in args.sections and "kernels" not in args.sections:
        parser.error("the first_call section times the kernels section's kernels: name both")
    return args


def datasets_for(args, mode):
    chosen = args.matrices.split(",") if args.matrices else None
    unknown = sorted(set(chosen or ()) - {name for name, _ in mode.matrices})
    if unknown:
        raise SystemExit(
            f"--matrices: {unknown} are not among {[name for name, _ in mode.matrices]}"
        )
    matrices = (
        []
        if args.only_mtx
        else [
            generate_matrix(SPMV_BY_NAME[name].scaled(scale), args.seed)
            for name, scale in mode.matrices
            if chosen is None or name in chosen
        ]
    )
    for folder in args.mtx:
        matrices.extend(read_mtx_folder(folder))
    tensors = (
        []
        if args.only_mtx or chosen
        else [
            generate_tensor(FROSTT_BY_NAME[name].scaled(scale), args.seed)
            for name, scale in mode.tensors
        ]
    )
    return matrices + tensors


def main(argv=None):
    previous_threads = ct.get_num_threads()
    try:
        return _run(parse_args(argv))
    finally:
        ct.set_num_threads(previous_threads)  # the peers' thread settings change coiter's


def _run(args):
    mode = MODES[args.mode]
    sections = args.sections
    threads = sorted(set(args.threads or [1, all_cores()]))
    kernels = select(args.kernels.split(",")) if args.kernels else KERNELS
    peers = make_peers(args.peers.split(",") if args.peers else None)
    started = time.perf_counter()
    log = lambda text: print(text, flush=True)  # noqa: E731
    log(
        f"coiter benchmarks, mode {args.mode}, threads {threads}, peers: "
        + ", ".join(
            f"{p.name} ({p.version})" if p.available else f"{p.name} (unavailable: {p.reason})"
            for p in peers
        )
    )

    result = {
        "mode": args.mode,
        "seed": args.seed,
        "threads": threads,
        "peers": {peer.name: peer.describe() for peer in peers},
        "repeat_policy": vars(mode.policy),
        "coiter_threads_settable": hasattr(ct, "set_num_threads"),
    }
    bandwidth = None
    if "stream" in sections:
        log("STREAM triad ...")
        result["stream"] = stream.probe(threads, elements=mode.stream_elements)
        if "by_threads" in result["stream"]:
            bandwidth = {t: r["best_gbs"] for t, r in result["stream"]["by_threads"].items()}
    data = datasets_for(args, mode) if sections & {"kernels", "paired"} else []
    if "kernels" in sections:
        result["datasets"] = [d.describe() for d in data]
        result["kernels"] = run_suite(
            data,
            kernels,
            peers,
            threads,
            mode.policy,
            args.seed,
            bandwidth,
            log,
            first_call="first_call" in sections,
        )
    if "scaling" in sections and len(threads) > 1:
        result["scaling"] = scaling.measure(args.mode, threads, mode.policy, args.seed, log)
    if "paired" in sections:
        log("paired comparison with SciPy ...")
        chosen = select(args.kernels.split(",") if args.kernels else paired.DEFAULT_KERNELS)
        # Paired with the peers named in --peers that it can be paired with (default SciPy).
        named = args.peers.split(",") if args.peers else ["scipy"]
        against = tuple(name for name in named if name in paired.AGAINST) or ("scipy",)
        result["paired"] = paired.measure(
            data, chosen, args.pairs or mode.paired_calls, args.seed, log, against
        )
    if "compile" in sections:
        log("compile latency ...")
        result["compile"] = compile_latency.measure(
            mode.compile_samples, mode.compile_processes, mode.call_number, 7, log
        )
    if "packing" in sections:
        log("packing ...")
        result["packing"] = packing.measure(
            mode.packing_nnz, max(16, mode.packing_nnz // 10), 5, mode.call_number, args.seed
        )
    result["wall_s"] = time.perf_counter() - started
    result["environment"] = environment(engine=ct.compiler.default_engine())
    result["build"] = build_info()
    result["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    out = args.output_dir
    write_results(out / f"{args.mode}.json", result)
    markdown = report.markdown(result)
    (out / f"{args.mode}.md").write_text(markdown)
    if not args.no_plots:
        report.plot(
            result, out / f"{args.mode}_speedup.png", out / f"{args.mode}_spmv_bandwidth.png"
        )
    log(f"\n{markdown}\nwritten to {out} in {result['wall_s']:.0f} s")
    failures = report.failures(result)
    for failure in failures:
        log(f"FAILURE: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
