"""coiter.distributed on a Dask LocalCluster against single-process coiter, SciPy and what a Dask
user does today (a ``dask.array`` of pydata/sparse blocks), all in one run (docs/distributed.md).

    python -m benchmarks.distributed                              # 1 and 2 workers (this machine)
    python -m benchmarks.distributed --workers 1 2 4 8 16 --spmv-nnz 100000000

For each worker count W a LocalCluster of W worker processes with one thread each is started;
the operands are partitioned into W blocks (row blocks, balanced by stored entries) and placed
on the workers before timing, the dense operands held on the cluster (``put``), as they stay
there across the calls of an iterative method. Within one cluster every peer is timed
interleaved with the others (benchmarks/timing.py), after its result was checked against the
single-process one:

| peer | what one call is |
|---|---|
| `dist` | `ct.distributed.evaluate(...)` until the result blocks are computed on the workers |
| `dist+gather` | the same, and the result gathered into a local tensor |
| `dask-pydata` | `(A @ x).persist()` on a dask array of pydata/sparse GCXS row blocks (the same) |
| `dask-pydata+gather` | `(A @ x).compute()` |
| `coiter 1t`, `coiter Wt` | `ct.evaluate` in this process with 1 and W threads |
| `scipy` | `A @ x` with SciPy (one thread) |

Kernels: SpMV `y(i) = A(i,j) x(j)`, SpMM `Y(i,k) = A(i,j) X(j,k)` (16 columns), SpGEMM
`C(i,j) = A(i,k) B(k,j)` (B = A), TTM `A(i,j,k) = B(i,j,l) C(k,l)` (SuperTaco's shape scaled
down, the result in `ssd` as SuperTaco's; no Dask peer: pydata's tensordot of sparse blocks
is not what users run). Results go to benchmarks/results/distributed.json and .md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .datasets import GENERATORS, rng_for
from .environment import script_environment, write_script_results
from .timing import RepeatPolicy, measure_interleaved, time_once

RESULTS = Path(__file__).resolve().parent / "results"


def _matrix(structure, n, per_row, seed):
    m = GENERATORS[structure](n, per_row, rng_for(structure, seed)).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return sp.csr_array(m)


def _tensor(shape, nnz, seed):
    rng = np.random.default_rng(seed)
    flat = np.unique(rng.integers(0, int(np.prod(shape, dtype=np.int64)), nnz))
    coords = np.column_stack(np.unravel_index(flat, shape))
    return ct.from_coords(coords, rng.random(len(flat)), shape, format="csf")


def _local(statement, threads, out_format=None, **operands):
    def call():
        ct.set_num_threads(threads)
        return ct.evaluate(statement, out_format=out_format, **operands)

    return call


def _dist(statement, gather, out_format=None, **operands):
    def call():
        result = ct.distributed.evaluate(
            statement, gather=gather, out_format=out_format, **operands
        )
        return result if gather else result.persist()

    return call


# TTM's result in SuperTaco's sparse format (its inferred format is dense: C has no zeros).
_TTM_FORMAT = "ssd"


def _dask(expression, gather):
    def call():
        return expression().compute() if gather else _persisted(expression())

    return call


def _persisted(array):
    from distributed import wait

    array = array.persist()
    wait(array)
    return array


def _value(result):
    """A peer's result as a NumPy array or SciPy CSR matrix."""
    import dask.array as da

    if isinstance(result, da.Array):
        result = result.compute()
    if isinstance(result, ct.distributed.PartitionedTensor):
        result = result.compute()
    if isinstance(result, ct.Tensor):
        if all(level.name == "dense" for level in result.format.levels):
            return result.to_numpy()
        if result.ndim != 2:  # (a TTM result is too large to densify: compared as a matrix)
            result = result.reshape((result.shape[0], -1))
        return result.to_scipy("csr")
    if hasattr(result, "to_scipy_sparse"):
        return sp.csr_array(result.to_scipy_sparse())
    if hasattr(result, "todense") and not sp.issparse(result):
        return np.asarray(result.todense())
    return sp.csr_array(result) if sp.issparse(result) else np.asarray(result)


def _agree(got, reference):
    if sp.issparse(reference) or sp.issparse(got):
        got, reference = sp.csr_array(got), sp.csr_array(reference)
        difference = abs(got - reference)
        return difference.nnz == 0 or difference.max() <= 1e-9 * max(abs(reference).max(), 1.0)
    return np.allclose(got, reference, rtol=1e-9, atol=1e-12)


def _cases(client, workers, data, with_dask):
    """name -> (nnz of the partitioned operand, {peer: zero-argument callable})."""
    import dask.array as da

    dist = ct.distributed
    cases = {}
    m, x, X, t, c = data["spmv"], data["x"], data["X"], data["ttm"], data["C"]
    A = dist.partition(m, parts=workers, name="A", client=client).persist()
    xs, Xs, cs = dist.put(x, client=client), dist.put(X, client=client), dist.put(c, client=client)
    spmv = "y(i) = A(i,j) * x(j)"
    peers = {"dist": _dist(spmv, False, A=A, x=xs), "dist+gather": _dist(spmv, True, A=A, x=xs)}
    cases["SpMV"] = (m.nnz, peers)
    spmm_matrix = data["spmm"]
    A2 = dist.partition(spmm_matrix, parts=workers, name="A", client=client).persist()
    spmm = "Y(i,k) = A(i,j) * X(j,k)"
    cases["SpMM"] = (
        spmm_matrix.nnz,
        {"dist": _dist(spmm, False, A=A2, X=Xs), "dist+gather": _dist(spmm, True, A=A2, X=Xs)},
    )
    g = data["spgemm"]
    A3 = dist.partition(g, parts=workers, name="A", client=client).persist()
    Bs = dist.put(g, client=client, name="B")
    spgemm = "C(i,j) = A(i,k) * B(k,j)"
    cases["SpGEMM"] = (
        g.nnz,
        {"dist": _dist(spgemm, False, A=A3, B=Bs), "dist+gather": _dist(spgemm, True, A=A3, B=Bs)},
    )
    T = dist.partition(t, parts=workers, name="B", client=client).persist()
    ttm = "A(i,j,k) = B(i,j,l) * C(k,l)"
    cases["TTM"] = (
        t.nnz,
        {
            "dist": _dist(ttm, False, _TTM_FORMAT, B=T, C=cs),
            "dist+gather": _dist(ttm, True, _TTM_FORMAT, B=T, C=cs),
        },
    )
    for name, statement, operands in (
        ("SpMV", spmv, {"A": m, "x": x}),
        ("SpMM", spmm, {"A": spmm_matrix, "X": X}),
        ("SpGEMM", spgemm, {"A": g, "B": g}),
        ("TTM", ttm, {"B": t, "C": c}),
    ):
        peers = cases[name][1]
        local = {k: (ct.asarray(v) if sp.issparse(v) else v) for k, v in operands.items()}
        out_format = _TTM_FORMAT if name == "TTM" else None
        peers["coiter 1t"] = _local(statement, 1, out_format, **local)
        if workers > 1:
            peers[f"coiter {workers}t"] = _local(statement, workers, out_format, **local)
        if name != "TTM":
            a, b = operands["A"], operands.get("x", operands.get("X", operands.get("B")))
            peers["scipy"] = lambda a=a, b=b: a @ b
    if with_dask:
        import sparse

        for name, matrix, other in (("SpMV", m, x), ("SpMM", spmm_matrix, X), ("SpGEMM", g, g)):
            bounds = A.bounds if name == "SpMV" else (A2.bounds if name == "SpMM" else A3.bounds)
            chunks = (tuple(np.diff(bounds)), (matrix.shape[1],))
            ad = _persisted(
                da.from_array(sparse.GCXS.from_scipy_sparse(matrix), chunks=chunks, asarray=False)
            )
            od = _persisted(
                da.from_array(
                    sparse.GCXS.from_scipy_sparse(other) if sp.issparse(other) else other,
                    chunks=-1,
                    asarray=False,
                )
            )

            def product(ad=ad, od=od):
                return ad @ od

            cases[name][1]["dask-pydata"] = _dask(product, False)
            cases[name][1]["dask-pydata+gather"] = _dask(product, True)
    return cases


def _generate(args):
    data = {
        "spmv": _matrix(args.structure, args.spmv_rows, args.spmv_nnz / args.spmv_rows, args.seed),
        "spmm": _matrix(args.structure, args.spmm_rows, args.per_row, args.seed + 1),
        "spgemm": _matrix(args.structure, args.spgemm_rows, args.spgemm_per_row, args.seed + 2),
        "ttm": _tensor(tuple(args.ttm_shape), args.ttm_nnz, args.seed + 3),
    }
    rng = np.random.default_rng(args.seed)
    data["x"] = rng.random(args.spmv_rows)
    data["X"] = rng.random((args.spmm_rows, args.columns))
    data["C"] = rng.random((args.ttm_rank, args.ttm_shape[2]))
    return data


def run(args):
    from dask.distributed import Client, LocalCluster

    data = _generate(args)
    rows = []
    previous_threads = ct.get_num_threads()
    try:
        for workers in args.workers:
            start = time.perf_counter()
            with (
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    memory_limit=0,
                ) as cluster,
                Client(cluster) as client,
            ):
                client.wait_for_workers(workers)
                cases = _cases(client, workers, data, not args.no_dask)
                print(
                    f"# {workers} worker(s): cluster and data ready in "
                    f"{time.perf_counter() - start:.1f} s",
                    flush=True,
                )
                for name, (nnz, peers) in cases.items():
                    if args.kernels and name not in args.kernels:
                        continue
                    rows.append(_measure(name, nnz, workers, peers, args.budget))
    finally:
        ct.set_num_threads(previous_threads)
    return rows


def _measure(name, nnz, workers, peers, budget):
    reference_peer = next(p for p in peers if p.startswith("coiter"))
    time_once(peers[reference_peer])  # compiles the kernel
    reference = _value(peers[reference_peer]())
    warmup = {}
    for peer, fn in peers.items():
        time_once(fn)  # first call: compiles, JITs (pydata: numba)
        got = _value(fn())
        if not _agree(got, reference):
            raise AssertionError(
                f"{peer} disagrees with {reference_peer} on {name} with {workers} worker(s)"
            )
        warmup[peer] = time_once(fn)
    policy = RepeatPolicy(min_repeats=5, max_repeats=100, budget_s=budget, cap_s=10 * budget)
    timings = measure_interleaved(peers, policy, warmup)
    row = {
        "kernel": name,
        "nnz": int(nnz),
        "workers": workers,
        "seconds": {
            p: t.median if not isinstance(t, Exception) else repr(t) for p, t in timings.items()
        },
        "iqr": {p: t.iqr for p, t in timings.items() if not isinstance(t, Exception)},
    }
    print(_line(row), flush=True)
    return row


def _line(row):
    s = row["seconds"]
    parts = [f"{row['kernel']:<7} workers={row['workers']}"]
    parts += [
        f"{peer} {v * 1e3:8.2f} ms" if isinstance(v, float) else f"{peer} failed"
        for peer, v in s.items()
    ]
    return "  ".join(parts)


def _ratio(numerator, denominator):
    if isinstance(numerator, float) and isinstance(denominator, float) and denominator > 0:
        return f"{numerator / denominator:.2f}"
    return "–"


def markdown(rows, env):
    lines = [
        "# coiter.distributed on a Dask LocalCluster",
        "",
        f"`python -m benchmarks.distributed {env.get('arguments', '')}`".replace(" `", "`"),
        "",
        f"Run {env.get('date', '')} on {env['processor']}, {env['cpus']} CPUs, load average at "
        f"the end {tuple(round(x, 2) for x in env['load_average_at_end'])}; dask "
        f"{env.get('dask')}, pydata/sparse {env.get('sparse')}. Median milliseconds per call; "
        "peers interleaved within one cluster, results checked against single-process coiter "
        "first. Worker processes have one thread each.",
        "",
        "| kernel | nnz | workers | dist | dist+gather | coiter 1t | coiter Wt | SciPy "
        "| dask-pydata | dask-pydata+gather | dist ÷ coiter 1t | dask-pydata ÷ dist |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        s = row["seconds"]
        w = row["workers"]

        def ms(peer, s=s):
            value = s.get(peer)
            return (
                f"{value * 1e3:.2f}" if isinstance(value, float) else ("failed" if value else "–")
            )

        lines.append(
            f"| {row['kernel']} | {row['nnz']:,} | {w} | {ms('dist')} | {ms('dist+gather')} | "
            f"{ms('coiter 1t')} | {ms(f'coiter {w}t') if w > 1 else '–'} | {ms('scipy')} | "
            f"{ms('dask-pydata')} | {ms('dask-pydata+gather')} | "
            f"{_ratio(s.get('dist'), s.get('coiter 1t'))} | "
            f"{_ratio(s.get('dask-pydata'), s.get('dist'))} |"
        )
    lines += [
        "",
        "Strong scaling (dist with 1 worker ÷ dist with W workers):",
        "",
        "| kernel | " + " | ".join(f"W = {w}" for w in sorted({r["workers"] for r in rows})) + " |",
        "|---|" + "---|" * len({r["workers"] for r in rows}),
    ]
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        by_workers = {r["workers"]: r["seconds"].get("dist") for r in rows if r["kernel"] == kernel}
        one = by_workers.get(1)
        lines.append(
            f"| {kernel} | "
            + " | ".join(_ratio(one, by_workers[w]) for w in sorted(by_workers))
            + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--structure", default="uniform", choices=sorted(GENERATORS))
    parser.add_argument("--spmv-rows", type=int, default=1_000_000)
    parser.add_argument("--spmv-nnz", type=int, default=10_000_000)
    parser.add_argument("--spmm-rows", type=int, default=200_000)
    parser.add_argument(
        "--per-row", type=float, default=10.0, help="entries per row of the SpMM matrix"
    )
    parser.add_argument("--columns", type=int, default=16, help="columns of SpMM's dense operand")
    parser.add_argument("--spgemm-rows", type=int, default=100_000)
    parser.add_argument("--spgemm-per-row", type=float, default=5.0)
    parser.add_argument("--ttm-shape", nargs=3, type=int, default=[20_000, 2_000, 500])
    parser.add_argument("--ttm-nnz", type=int, default=1_000_000)
    parser.add_argument("--ttm-rank", type=int, default=8)
    parser.add_argument("--kernels", nargs="+", choices=["SpMV", "SpMM", "SpGEMM", "TTM"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--budget", type=float, default=2.0, help="seconds of timed calls per peer and kernel"
    )
    parser.add_argument(
        "--no-dask",
        action="store_true",
        help="leave the dask.array of pydata/sparse peer out "
        "(its first calls compile with numba for seconds in every worker)",
    )
    parser.add_argument("--output", default=str(RESULTS / "distributed"))
    args = parser.parse_args(argv)
    rows = run(args)
    import dask

    env = script_environment(argv, dask=dask.__version__)
    write_script_results(args.output, rows, env, markdown)
    return rows


if __name__ == "__main__":
    main()
