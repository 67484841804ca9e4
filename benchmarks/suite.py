"""Every kernel on every data set, for every peer and thread count: check, then time.

For one (kernel, data set): each available peer prepares the kernel (converts the operands,
compiles); each prepared peer computes the result once (the warm-up, timed apart); the
results are cross-checked (``checking``), against a dense NumPy reference as well when the
operands are small; then the peers whose results agree are timed, interleaved.

Thread counts: the first row of each case is single-threaded (every peer on one thread).
Each further thread count (all cores) times again only the peers that can change their
thread count; a single-threaded peer is not re-timed, and the row says so, so that no
number is presented as parallel when it is not.
"""

import gc
import time
import traceback

from coiter.progress import progress

from . import first_call as first_call_module
from . import kernels as kernels_module
from .checking import cross_check
from .datasets import rng_for
from .peers import CoiterPeer, CoiterScipyOperandsPeer, Unsupported
from .timing import measure_interleaved, time_call

# The dense reference runs when its largest array has at most this many elements.
DENSE_REFERENCE_LIMIT = 4_000_000
# The first-call measurement needs the kernel in the disk cache: one of these compiled it
# here, and its result agreed with the others'.
COITER_PEERS = (CoiterPeer.name, CoiterScipyOperandsPeer.name)


def _error_text(error):
    return f"{type(error).__name__}: {error}"


def run_case(
    kernel, data, peers, thread_counts, policy, rng, bandwidth=None, log=print, first_call=False
):
    """Records (one per thread count) for ``kernel`` on ``data``; with ``first_call``, the
    last row (the most threads) also holds the first call in a fresh process
    (``first_call``)."""
    operands = kernels_module.make_operands(kernel, data, rng)
    peer_records, prepared, results = {}, {}, {}
    for peer in peers:
        if not peer.available:
            peer_records[peer.name] = {"status": "unavailable", "reason": peer.reason}
            continue
        if peer.can_set_threads():
            peer.set_threads(thread_counts[0])
        try:
            start = time.perf_counter()
            call = peer.prepare(kernel, operands)
            prepare_s = time.perf_counter() - start
            warmup_s, result = time_call(call)
            results[peer.name] = peer.comparable(result)
            del result
        except Unsupported as reason:
            peer_records[peer.name] = {"status": "unsupported", "reason": str(reason)}
            continue
        except Exception as error:  # a peer failing is recorded with its exception text
            peer_records[peer.name] = {
                "status": "error",
                "reason": _error_text(error),
                "traceback": traceback.format_exc(),
            }
            log(f"    {peer.name} FAILED: {_error_text(error)}")
            continue
        prepared[peer.name] = call
        peer_records[peer.name] = {"status": "ok", "prepare_s": prepare_s, "warmup_s": warmup_s}

    reference = None
    if kernels_module.dense_size(operands, kernel) <= DENSE_REFERENCE_LIMIT:
        reference = kernels_module.dense_reference(kernel, operands)
    verdicts, reference_name = cross_check(results, reference) if results else ({}, None)
    del results, reference
    for name, verdict in verdicts.items():
        peer_records[name]["check"] = verdict.as_dict()
        if not verdict.ok:
            peer_records[name]["status"] = "mismatch"
            peer_records[name]["reason"] = verdict.detail
            prepared.pop(name)
            log(f"    {name} MISMATCH: {verdict.detail}")

    by_name = {peer.name: peer for peer in peers}
    spmv_bytes = kernels_module.spmv_bytes(operands) if kernel.name.startswith("spmv") else None
    rows = []
    for row, threads in enumerate(thread_counts):
        timed = {
            name: call
            for name, call in prepared.items()
            if row == 0 or by_name[name].can_set_threads()
        }
        if row > 0 and not timed:
            continue
        for name in timed:
            if by_name[name].can_set_threads():
                by_name[name].set_threads(threads)
        warmups = {name: peer_records[name]["warmup_s"] for name in timed}
        timings = measure_interleaved(timed, policy, warmups, warmup_rounds=1 if row else 0)
        cells = {}
        for name, record in peer_records.items():
            cell = {key: value for key, value in record.items() if key != "traceback"}
            if name in timings:
                outcome = timings[name]
                if isinstance(outcome, Exception):
                    cell.update(status="error", reason=f"while timing: {_error_text(outcome)}")
                else:
                    cell["timing"] = outcome.as_dict()
                    cell["threads"] = by_name[name].threads()
                    if spmv_bytes:
                        cell["gbs"] = spmv_bytes / outcome.median / 1e9
                        if bandwidth and threads in bandwidth:
                            cell["stream_fraction"] = cell["gbs"] / bandwidth[threads]
            elif row > 0 and record["status"] == "ok":
                cell = {
                    "status": "single-threaded",
                    "reason": f"{name} cannot change its thread count; see the 1-thread row",
                }
            cells[name] = cell
        rows.append(
            {
                "kernel": kernel.name,
                "title": kernel.title,
                "expression": kernel.expression,
                "data": data.name,
                "threads": threads,
                "spmv_bytes": spmv_bytes,
                "reference": reference_name,
                "peers": cells,
            }
        )
    for peer in peers:
        if peer.available and peer.can_set_threads():
            peer.set_threads(thread_counts[0])
    if first_call and any(
        peer_records.get(name, {}).get("status") == "ok" for name in COITER_PEERS
    ):
        record = first_call_module.measure(kernel, operands, thread_counts[-1])
        if "error" in record:
            log(f"    first call FAILED: {record['error']}")
        rows[-1]["first_call"] = record
    # Tracebacks go into the JSON once, with the first row.
    for name, record in peer_records.items():
        if "traceback" in record and rows:
            rows[0]["peers"][name]["traceback"] = record["traceback"]
    del prepared, operands
    gc.collect()
    return rows


def run_suite(
    datasets,
    kernels,
    peers,
    thread_counts,
    policy,
    seed,
    bandwidth=None,
    log=print,
    first_call=False,
):
    """All records, kernel by kernel on each data set."""
    records = []
    cases = sum(kernel.on == _data_kind(data) for data in datasets for kernel in kernels)
    with progress(cases, "benchmark cases", "cases") as bar:
        # Lines printed while a bar is drawn go above it, so that it stays whole.
        log = bar.write if bar.shown else log
        for data in datasets:
            on = _data_kind(data)
            described = data.describe()
            log(
                f"{data.name}: {described['shape']}, {described['nnz']:,} nonzeros "
                f"({described['source']})"
            )
            for kernel in kernels:
                if kernel.on != on:
                    continue
                start = time.perf_counter()
                rng = rng_for(f"{data.name}:{kernel.name}", seed)
                rows = run_case(
                    kernel, data, peers, thread_counts, policy, rng, bandwidth, log, first_call
                )
                for row in rows:
                    row["data_info"] = described
                records.extend(rows)
                log(
                    f"  {kernel.name:18s} {time.perf_counter() - start:6.1f} s  "
                    + "  ".join(f"{name}={_short(cell)}" for name, cell in rows[0]["peers"].items())
                    + _short_first_call(rows[-1].get("first_call"))
                )
                bar.update(1)
    return records


def _data_kind(data):
    """Which kernels run on ``data``: "tensor" (coordinates) or "matrix"."""
    return "tensor" if hasattr(data, "coords") else "matrix"


def _short_first_call(record):
    if not record or "error" in record:
        return ""
    return f"  first call={record['first_call_s'] * 1e3:.3g}ms"


def _short(cell):
    if "timing" in cell:
        return f"{cell['timing']['median'] * 1e3:.3g}ms"
    return cell["status"]
