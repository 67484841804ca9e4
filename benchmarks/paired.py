"""Paired comparison of coiter and SciPy, for the close calls of the single-thread tables
(or of coiter on pre-wrapped tensors and on the SciPy matrices themselves: what a user's
natural spelling costs).

The suite's tables give each peer a time budget per case, which on a shared machine resolves
differences of about ±10 %: CSR SpMV, bound by memory on both sides, reads 0.93× one run and
1.02× the next. Here coiter and SciPy (or another peer) alternate call by call, many times, on one
operand set; each pair's ratio (the other's time ÷ coiter's) is kept, and the median ratio is
reported with a bootstrap 95 % confidence interval, narrow enough to tell 1.00 from 0.97. Each
peer goes first in every other pair. Both results are checked against each other first. One
thread; matrices only."""

import numpy as np

import coiter as ct

from .checking import agree
from .datasets import MatrixData
from .kernels import make_operands
from .peers import CoiterPeer, CoiterScipyOperandsPeer, ScipyPeer
from .timing import time_call, time_once

DEFAULT_KERNELS = ("spmv_csr",)
# The peers coiter can be paired with, by name: its own calls with SciPy operands, or SciPy.
AGAINST = {"scipy": ScipyPeer, "coiter-scipy": CoiterScipyOperandsPeer}
WARMUP_PAIRS = 10
BOOTSTRAP_SAMPLES = 2000


def compare(kernel, data, pairs, rng, against="scipy"):
    """The paired record of ``kernel`` on ``data``, coiter against the peer named
    ``against`` (one of AGAINST): both peers' median seconds, the median ratio and its
    bootstrap interval."""
    operands = make_operands(kernel, data, rng)
    coiter, other = CoiterPeer(), AGAINST[against]()
    calls = {"coiter": coiter.prepare(kernel, operands), "other": other.prepare(kernel, operands)}
    _, c = time_call(calls["coiter"])
    _, s = time_call(calls["other"])
    same, error, detail = agree(other.comparable(s), coiter.comparable(c))
    if not same:
        raise AssertionError(
            f"{kernel.name} on {data.name}: coiter and {against} disagree "
            f"(max error {error}) {detail}"
        )
    del c, s
    for _ in range(WARMUP_PAIRS):
        time_once(calls["coiter"])
        time_once(calls["other"])
    seconds = {"coiter": [], "other": []}
    for pair in range(pairs):
        # Each goes first in every other pair, so that what the first call leaves in the caches
        # (or takes from them) favours neither.
        for name in ("coiter", "other") if pair % 2 == 0 else ("other", "coiter"):
            seconds[name].append(time_once(calls[name]))
    ratios = np.array(seconds["other"]) / np.array(seconds["coiter"])
    boot = np.median(rng.choice(ratios, (BOOTSTRAP_SAMPLES, len(ratios))), axis=1)
    return {
        "kernel": kernel.name,
        "title": kernel.title,
        "data": data.name,
        "nnz": int(data.matrix.nnz),
        "against": against,
        "pairs": pairs,
        "coiter_s": float(np.median(seconds["coiter"])),
        "scipy_s": float(np.median(seconds["other"])),  # (the key older results use)
        "ratio": float(np.median(ratios)),
        "ratio_low": float(np.percentile(boot, 2.5)),
        "ratio_high": float(np.percentile(boot, 97.5)),
    }


def measure(datasets, kernels, pairs, seed, log=print, against=("scipy",)):
    """Paired records for every matrix in ``datasets``, each of ``kernels`` and each peer
    named in ``against`` (single thread)."""
    previous = ct.get_num_threads()
    ct.set_num_threads(1)
    try:
        records = []
        for data in (d for d in datasets if isinstance(d, MatrixData)):
            for kernel in kernels:
                for other in against:
                    record = compare(kernel, data, pairs, np.random.default_rng(seed), other)
                    log(
                        f"  paired {kernel.name} on {data.name}, {other} ÷ coiter: "
                        f"{record['ratio']:.3f}× "
                        f"({record['ratio_low']:.3f}–{record['ratio_high']:.3f})"
                    )
                    records.append(record)
        return records
    finally:
        ct.set_num_threads(previous)


def markdown_lines(records):
    if not records:
        return []
    lines = [
        f"| paired, 1 thread ({records[0]['pairs']} alternating calls each) "
        "| data | nonzeros | coiter "
        "| against | its time | its time ÷ coiter's, median of pairs | 95 % interval |",
        "|---|---|--:|--:|---|--:|--:|--:|",
    ]
    for r in records:
        lines.append(
            f"| {r['title']} | {r['data']} | {r['nnz']:,} | {r['coiter_s'] * 1e3:.3g} ms "
            f"| {r.get('against', 'scipy')} | {r['scipy_s'] * 1e3:.3g} ms | {r['ratio']:.3f}× "
            f"| {r['ratio_low']:.3f}–{r['ratio_high']:.3f} |"
        )
    return lines
