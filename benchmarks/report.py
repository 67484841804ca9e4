"""The results as a Markdown table and as plots (speedup over SciPy per kernel and data set;
fraction of the STREAM bandwidth for SpMV), and the list of failures.

Table cells: the median time per call with its spread (interquartile range over the median);
``n/a [k]`` where the peer cannot run the kernel and **FAIL [k]** / **ERROR [k]** where its
result disagreed or it raised, with the reason in note k below the table; ``1 thread`` in an
all-core row for a peer that cannot use more threads (its time is in the 1-thread row).
Beside the peers: coiter called with SciPy operands over coiter called with its tensors, and
the first call in a fresh process (in the row of the thread count it ran with).
"""

import statistics

from . import paired, scaling
from .peers import BASELINE, CoiterPeer, CoiterScipyOperandsPeer

SUBJECT = CoiterPeer.name
# coiter called as users call it: a variant of the subject, not a peer it is compared with.
AS_USERS_CALL = CoiterScipyOperandsPeer.name
IN_CACHE_NOTE = (
    "the SpMV's bytes fit in the last-level cache, so it is not bound by memory "
    "bandwidth and can exceed 100 % of STREAM; only larger matrices (full mode) "
    "measure the bandwidth target"
)


def _ms(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _median(cell):
    return cell["timing"]["median"] if "timing" in cell else None


class _Notes:
    """Numbered reasons, each text once."""

    def __init__(self):
        self.texts = []

    def ref(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1


def _cell(cell, notes):
    status = cell["status"]
    if "timing" in cell:
        timing = cell["timing"]
        spread = timing["iqr"] / timing["median"] if timing["median"] else 0
        return f"{_ms(timing['median'])} ±{spread:.0%}"
    if status == "single-threaded":
        return "1 thread"
    label = {
        "unsupported": "n/a",
        "unavailable": "n/a",
        "mismatch": "**FAIL**",
        "error": "**ERROR**",
    }[status]
    return f"{label} [{notes.ref(cell.get('reason', status))}]"


def _baseline_1t(records):
    """(kernel, data) -> SciPy's single-thread median (the baseline of every speedup)."""
    return {
        (r["kernel"], r["data"]): _median(r["peers"].get(BASELINE, {}))
        for r in records
        if r["threads"] == 1
    }


def speedups(result):
    """Rows of (kernel, data, threads, coiter time, speedup over SciPy 1-thread, speedup over
    the fastest other peer at the same row, SpMV STREAM fraction)."""
    records = result.get("kernels", [])
    baseline = _baseline_1t(records)
    rows = []
    for r in records:
        ours = _median(r["peers"].get(SUBJECT, {}))
        scipy_time = baseline.get((r["kernel"], r["data"]))
        others = [
            _median(c)
            for name, c in r["peers"].items()
            if name not in (SUBJECT, AS_USERS_CALL) and _median(c)
        ]
        as_users_call = _median(r["peers"].get(AS_USERS_CALL, {}))
        rows.append(
            {
                "kernel": r["kernel"],
                "data": r["data"],
                "threads": r["threads"],
                "coiter_s": ours,
                "scipy_operands_over_tensors": as_users_call / ours
                if as_users_call and ours
                else None,
                "vs_scipy": scipy_time / ours if ours and scipy_time else None,
                "vs_best_peer": min(others) / ours if ours and others else None,
                "stream_fraction": r["peers"].get(SUBJECT, {}).get("stream_fraction"),
            }
        )
    return rows


def _first_call_cells(record, notes):
    """The first call in a fresh process and its ``ct.compile`` from the disk cache."""
    if not record:
        return ["", ""]
    if "error" in record:
        return [f"**ERROR [{notes.ref(record['error'])}]**", ""]
    marks = "".join(f" [{notes.ref(problem)}]" for problem in record["problems"])
    return [_ms(record["first_call_s"]) + marks, _ms(record["compile_s"])]


def _kernel_table(result, notes):
    records = result.get("kernels", [])
    if not records:
        return []
    peer_names = list(result["peers"])
    labels = [result["peers"][name].get("label", name) for name in peer_names]
    lines = [
        "| kernel | data | threads | "
        + " | ".join(labels)
        + " | coiter: SciPy operands ÷ tensors | coiter first call, fresh process "
        "| its ct.compile (disk cache) | coiter vs SciPy (1 thread) "
        "| coiter vs fastest peer | SpMV: coiter % of STREAM |",
        "|---|---|--:|" + "--:|" * len(peer_names) + "--:|--:|--:|--:|--:|--:|",
    ]
    cache = result.get("stream", {}).get("last_level_cache_bytes", 0)
    for r, s in zip(records, speedups(result)):
        cells = [
            _cell(r["peers"][name], notes) if name in r["peers"] else "" for name in peer_names
        ]
        fraction = f"{s['stream_fraction']:.0%}" if s["stream_fraction"] is not None else ""
        if fraction and r["spmv_bytes"] < cache:
            # Data that fits in the last-level cache is not limited by memory bandwidth.
            fraction += f" [{notes.ref(IN_CACHE_NOTE)}]"
        overhead = s["scipy_operands_over_tensors"]
        cells += [
            f"{overhead:.2f}" if overhead else "",
            *_first_call_cells(r.get("first_call"), notes),
        ]
        lines.append(
            f"| {r['title']} | {r['data']} | {r['threads']} | "
            + " | ".join(cells)
            + f" | {_ratio(s['vs_scipy'])} | {_ratio(s['vs_best_peer'])} | {fraction} |"
        )
    return lines


def _ratio(value):
    return f"{value:.2f}×" if value else ""


def _compile_lines(compile_result, notes):
    if not compile_result:
        return []
    lines = ["| compile latency, CSR SpMV | median | min | spread |", "|---|--:|--:|--:|"]

    def row(label, entry):
        if entry:
            t = entry["timing"]
            lines.append(
                f"| {label} | {_ms(t['median'])} | {_ms(t['minimum'])} "
                f"| ±{t['iqr'] / t['median']:.0%} |"
            )

    row(
        f"coiter, cold (empty memory and disk cache; {compile_result['engine']} engine)",
        compile_result.get("coiter_cold"),
    )
    row("coiter, warm (in-memory cache hit)", compile_result.get("coiter_warm_memory"))
    row(
        "coiter, first compile in a fresh process, kernel in the disk cache",
        compile_result.get("coiter_fresh_process_disk"),
    )
    tensora = compile_result.get("tensora", {})
    row("tensora 0.6 (llvmlite), cold", tensora.get("cold"))
    row("tensora, warm (lru_cache hit)", tensora.get("warm_memory"))
    lines.append(
        f"| TACO (quoted, not measured: cannot be installed here) "
        f"| ~{_ms(compile_result['taco_quoted_s'])} | | |"
    )
    overhead = compile_result.get("call_overhead")
    if overhead:
        row("call of a cached coiter kernel, 4 x 4 CSR", {"timing": overhead["coiter"]})
        if "coiter_numpy_x" in overhead:
            row("same, x a NumPy array", {"timing": overhead["coiter_numpy_x"]})
            row(
                "same, A a SciPy CSR array and x a NumPy array",
                {"timing": overhead["coiter_scipy_a"]},
            )
        row("SciPy `A @ x`, same matrix", {"timing": overhead["scipy"]})
    for name, error in compile_result.get("errors", {}).items():
        lines.append(f"| {name} | **ERROR [{notes.ref(error)}]** | | |")
    return lines


def _packing_lines(result):
    if not result or "error" in result:
        return [f"packing: **ERROR**: {result['error']}"] if result else []
    pack, wrap = result["pack_coo_to_csr"], result["wrap_canonical_csr"]
    return [
        "| data layer | coiter | SciPy | ratio | target |",
        "|---|--:|--:|--:|--:|",
        f"| COO → CSR, {result['nnz']:,} nonzeros | {_ms(pack['coiter']['median'])} "
        f"| {_ms(pack['scipy']['median'])} | {pack['ratio']:.2f}× | ≤ {pack['target_ratio']:g}× |",
        f"| `ct.asarray(csr)`, canonical (zero copy: {wrap['zero_copy']}) "
        f"| {_ms(wrap['coiter']['median'])} | | | < {_ms(wrap['target_s'])} |",
    ]


def _targets(result):
    """Where coiter stands against the issue's targets, in words."""
    rows = speedups(result)
    one = [r for r in rows if r["threads"] == 1 and r["coiter_s"]]
    multi = [r for r in rows if r["threads"] > 1 and r["coiter_s"]]
    structure = {d["name"]: d["structure"] for d in result.get("datasets", [])}
    lines = []
    if not result.get("coiter_threads_settable"):
        lines.append(
            "- coiter has no `ct.set_num_threads` yet: its kernels run on one thread, "
            "so every all-core target below is not yet measurable; the all-core rows "
            "time only the peers that use threads (MKL)."
        )
    cache = result.get("stream", {}).get("last_level_cache_bytes", 0)
    spmv_bytes = {(r["kernel"], r["data"]): r["spmv_bytes"] for r in result.get("kernels", [])}
    for label, group in (("1 thread", one), ("all cores", multi)):
        banded = [
            r
            for r in group
            if r["kernel"] == "spmv_csr"
            and r["stream_fraction"] is not None
            and structure.get(r["data"]) in ("banded", "block")
        ]
        if banded:
            lines.append(
                f"- SpMV ≥ 85 % of STREAM on banded matrices ({label}, of the STREAM "
                f"bandwidth at the same thread count): "
                + ", ".join(
                    f"{r['data']} {r['stream_fraction']:.0%}"
                    + (" (in cache)" if spmv_bytes[(r["kernel"], r["data"])] < cache else "")
                    for r in banded
                )
                + "."
            )
        by_class = {}
        for r in group:
            if r["vs_scipy"] and structure.get(r["data"]) not in (None, "frostt-like"):
                by_class.setdefault(structure[r["data"]], []).append(r["vs_scipy"])
        if by_class:
            lines.append(
                f"- ≥ 1.5× SciPy on every matrix class ({label}): geometric-mean speedup "
                "over SciPy's single-thread time, matrix kernels, per class: "
                + ", ".join(f"{c} {_geomean(v):.2f}×" for c, v in sorted(by_class.items()))
                + "."
            )
    slower = [r for r in one if r["vs_best_peer"] and r["vs_best_peer"] < 1]
    lines.append(
        f"- As fast as every peer (1 thread): coiter is the fastest in "
        f"{sum(1 for r in one if r['vs_best_peer'] and r['vs_best_peer'] >= 1)} of "
        f"{sum(1 for r in one if r['vs_best_peer'])} cases; slower in: "
        + (
            ", ".join(f"{r['kernel']} on {r['data']} ({r['vs_best_peer']:.2f}×)" for r in slower)
            or "none"
        )
        + "."
    )
    return lines


def _geomean(values):
    return statistics.geometric_mean(values)


def markdown(result):
    env = result["environment"]
    notes = _Notes()
    stream = result.get("stream", {})
    bandwidth = (
        "STREAM triad: "
        + ", ".join(
            f"{t} thread(s) {r['best_gbs']:.1f} GB/s" for t, r in stream["by_threads"].items()
        )
        if "by_threads" in stream
        else f"STREAM probe: {stream.get('error', 'not run')}"
    )
    peers = ", ".join(
        f"{name} {p['version']}" if p["available"] else f"{name} unavailable ({p['reason']})"
        for name, p in result["peers"].items()
    )
    policy = result["repeat_policy"]
    lines = [
        f"## Benchmark results ({result['mode']} mode, {result['timestamp']})",
        "",
        f"{env['processor']}, {env['cpus']} CPUs, Python {env['python']}, NumPy {env['numpy']}, "
        f"coiter {env['coiter']} ({env['engine']} engine, commit "
        f"{result['build'].get('commit', '?')[:10]}); peers: {peers}. {bandwidth}. "
        f"Load average at the end: {', '.join(f'{x:.1f}' for x in env['load_average_at_end'])}.",
        "",
        f"Median time per call (± interquartile range / median) of {policy['min_repeats']} to "
        f"{policy['max_repeats']} interleaved calls after a warm-up call, float64; results of "
        "all peers were cross-checked (and against dense NumPy on small operands) before "
        "timing. Speedups are SciPy's single-thread time over coiter's; SpMV bytes = values + "
        "indices + pos + x + y. Run with `python -m benchmarks"
        + ("" if result["mode"] == "full" else f" --{result['mode']}")
        + "`.",
        "",
    ]
    lines += _kernel_table(result, notes)
    if result.get("scaling"):
        lines += ["", *scaling.markdown_lines(result["scaling"])]
    if result.get("paired"):
        lines += ["", *paired.markdown_lines(result["paired"])]
    lines += ["", *_compile_lines(result.get("compile"), notes), ""]
    lines += [*_packing_lines(result.get("packing")), ""]
    lines += ["Where coiter stands against the targets:", "", *_targets(result), ""]
    if notes.texts:
        lines += ["Notes:", ""] + [f"{k}. {text}" for k, text in enumerate(notes.texts, 1)] + [""]
    return "\n".join(lines)


def failures(result):
    found = []
    for r in result.get("kernels", []):
        for name, cell in r["peers"].items():
            if cell["status"] in ("mismatch", "error"):
                found.append(
                    f"{name} {cell['status']} on {r['kernel']} / {r['data']} "
                    f"({r['threads']} threads): {cell.get('reason')}"
                )
        first_call = r.get("first_call", {})
        if "error" in first_call:
            found.append(f"first call of {r['kernel']} / {r['data']}: {first_call['error']}")
        found += [
            f"first call of {r['kernel']} / {r['data']}: {problem}"
            for problem in first_call.get("problems", ())
        ]
    found += [
        f"compile latency {k}: {v}" for k, v in result.get("compile", {}).get("errors", {}).items()
    ]
    if "error" in result.get("packing", {}):
        found.append(f"packing: {result['packing']['error']}")
    return found


def plot(result, speedup_path, bandwidth_path):
    """Speedup over SciPy (kernels x data sets, 1 thread and all cores) and the SpMV
    fraction of STREAM per peer, as PNG files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for r in speedups(result) if r["vs_scipy"]]
    if rows:
        kernels = list(dict.fromkeys(r["kernel"] for r in rows))
        data = list(dict.fromkeys(r["data"] for r in rows))
        thread_counts = sorted({r["threads"] for r in rows})
        fig, axes = plt.subplots(
            1,
            len(thread_counts),
            squeeze=False,
            figsize=(1.2 + 1.1 * len(data) * len(thread_counts), 1 + 0.45 * len(kernels)),
        )
        for ax, threads in zip(axes[0], thread_counts):
            grid = np.full((len(kernels), len(data)), np.nan)
            for r in rows:
                if r["threads"] == threads:
                    grid[kernels.index(r["kernel"]), data.index(r["data"])] = r["vs_scipy"]
            image = ax.imshow(np.log2(grid), cmap="RdYlGn", vmin=-2, vmax=2, aspect="auto")
            for (i, j), value in np.ndenumerate(grid):
                if not np.isnan(value):
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7)
            ax.set_xticks(range(len(data)), data, rotation=35, ha="right", fontsize=7)
            ax.set_yticks(range(len(kernels)), kernels, fontsize=7)
            ax.set_title(f"coiter speedup over SciPy, coiter on {threads} thread(s)", fontsize=8)
        fig.colorbar(image, ax=axes[0].tolist(), label="log2 speedup")
        fig.savefig(speedup_path, dpi=120, bbox_inches="tight")
        plt.close(fig)

    spmv = [r for r in result.get("kernels", []) if r["kernel"].startswith("spmv")]
    if spmv:
        labels = [f"{r['kernel'][5:]} {r['data']} {r['threads']}t" for r in spmv]
        peer_names = list(result["peers"])
        fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(labels)), 3.5))
        width = 0.8 / len(peer_names)
        for k, name in enumerate(peer_names):
            values = [r["peers"].get(name, {}).get("stream_fraction", 0) * 100 for r in spmv]
            ax.bar(
                np.arange(len(labels)) + k * width,
                values,
                width,
                label=result["peers"][name].get("label", name),
            )
        ax.axhline(85, color="black", linestyle="--", linewidth=0.8, label="target 85 %")
        ax.set_xticks(
            np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=60, ha="right", fontsize=6
        )
        ax.set_ylabel("% of STREAM triad (same threads)")
        ax.set_title("SpMV: fraction of the STREAM bandwidth", fontsize=9)
        ax.legend(fontsize=7, ncols=3)
        fig.savefig(bandwidth_path, dpi=120, bbox_inches="tight")
        plt.close(fig)
