"""The array interface against SciPy and pydata/sparse (docs/arrays.md): operators as users spell
them, every peer timed interleaved in the same run on the same matrices, after their results
were checked against each other.

    python -m benchmarks.arrays                       # n = 200,000 rows, ~10 entries a row
    python -m benchmarks.arrays --n 50000 --threads 1 2 --structures banded power_law

| name | coiter | SciPy | pydata/sparse |
|---|---|---|---|
| `T @ x` | `np.asarray(T @ x)` | `M @ x` | `S @ x` |
| `T + T` | `(T + T).evaluate()` | `M + M` | `S + S` |
| `T.T @ x` | `np.asarray(T.T @ x)` (transposed SpMV, no copy of T) | `M.T @ x` | `S.T @ x` |
| `(A + B) @ x` | one fused kernel, no `A + B` built | `(A + B) @ x` | `(S + R) @ x` |
| CG solve | `cg(T, b, rtol=1e-8)` (coiter's matvec) | `cg(M, b, ...)` | `cg(S, b, ...)` |

Every coiter column is what the user writes, lazy tensor included (building the expression,
finding its kernel in the cache, the call). Results go to benchmarks/results/arrays.json and
arrays.md; ratios are SciPy's (or pydata's) median time over coiter's (> 1: coiter faster).
"""

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import coiter as ct

from .datasets import GENERATORS, rng_for
from .environment import script_environment, write_script_results
from .timing import RepeatPolicy, measure_interleaved, time_once

RESULTS = Path(__file__).resolve().parent / "results"
CG_RTOL = 1e-8


def _matrix(structure, n, per_row, seed):
    m = GENERATORS[structure](n, per_row, rng_for(structure, seed)).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return sp.csr_array(m)


def _spd(m):
    """A symmetric positive definite matrix with ``m``'s pattern (plus the diagonal)."""
    s = sp.csr_array(abs(m) + abs(m).T)
    s = s + sp.diags_array(np.asarray(s.sum(axis=1)).ravel() + 1.0)
    s = sp.csr_array(s)
    s.sort_indices()
    return s


def _cg(operator, b):
    # To a relative residual of 1e-8: every peer's solve takes the same iterations (the same
    # work), and a fixed count without a tolerance would iterate into rounding noise.
    x, info = spla.cg(operator, b, rtol=CG_RTOL, maxiter=1000)
    if info != 0:
        raise AssertionError(f"CG did not converge ({info})")
    return x


def cases(m, m2, spd, pydata):
    """name -> {peer: zero-argument callable}; each returns something np.asarray reads."""
    n = m.shape[0]
    x = np.linspace(0.5, 1.5, n)
    t, t2, t_spd = ct.asarray(m), ct.asarray(m2), ct.asarray(spd)
    result = {
        "T @ x": {"coiter": lambda: np.asarray(t @ x), "scipy": lambda: m @ x},
        "T + T": {"coiter": lambda: (t + t).evaluate(), "scipy": lambda: m + m},
        "T.T @ x": {"coiter": lambda: np.asarray(t.T @ x), "scipy": lambda: m.T @ x},
        "(A + B) @ x": {"coiter": lambda: np.asarray((t + t2) @ x), "scipy": lambda: (m + m2) @ x},
        "CG solve": {"coiter": lambda: _cg(t_spd, x), "scipy": lambda: _cg(spd, x)},
    }
    if pydata is not None:
        s, s2, s_spd = (pydata.GCXS.from_scipy_sparse(a) for a in (m, m2, spd))
        result["T @ x"]["pydata"] = lambda: s @ x
        result["T + T"]["pydata"] = lambda: s + s
        result["T.T @ x"]["pydata"] = lambda: s.T @ x
        result["(A + B) @ x"]["pydata"] = lambda: (s + s2) @ x
        result["CG solve"]["pydata"] = lambda: _cg(s_spd, x)
    return result


def _comparable(value):
    """A peer's result as a NumPy vector or a SciPy CSR matrix (never a dense matrix)."""
    if isinstance(value, ct.Tensor):
        return value.to_scipy("csr") if value.ndim == 2 else value.to_numpy()
    if hasattr(value, "to_scipy_sparse"):  # pydata/sparse
        return sp.csr_array(value.to_scipy_sparse())
    return sp.csr_array(value) if sp.issparse(value) else np.asarray(value)


def _agree(got, reference):
    if sp.issparse(reference):
        difference = abs(sp.csr_array(got) - reference)
        return difference.nnz == 0 or difference.max() <= 1e-9 * max(abs(reference).max(), 1.0)
    # Relative to the vector's norm: two CG solutions to a residual of 1e-8 agree to about
    # that, not entry by entry (other summation orders round differently).
    return np.linalg.norm(got - reference) <= 1e-6 * max(np.linalg.norm(reference), 1e-300)


def run(n, per_row, structures, threads, seed, budget, with_pydata=True):
    try:
        import sparse as pydata
    except ImportError:
        pydata = None
    if not with_pydata:
        pydata = None
    rows = []
    previous_threads = ct.get_num_threads()
    try:
        _run_all(rows, n, per_row, structures, threads, seed, budget, pydata)
    finally:
        ct.set_num_threads(previous_threads)  # (the caller's setting, whatever the run did)
    return rows


def _run_all(rows, n, per_row, structures, threads, seed, budget, pydata):
    for structure in structures:
        m = _matrix(structure, n, per_row, seed)
        m2 = _matrix(structure, n, per_row, seed + 1)
        spd = _spd(m)
        for count in threads:
            ct.set_num_threads(count)
            for name, peers in cases(m, m2, spd, pydata).items():
                warmup, reference = {}, None
                for peer, fn in peers.items():
                    time_once(fn)  # first call: compiles coiter's kernel
                    got = _comparable(fn())
                    if reference is None:
                        reference = got
                    elif not _agree(got, reference):
                        raise AssertionError(
                            f"{peer} disagrees with {next(iter(peers))} on {name} ({structure})"
                        )
                    warmup[peer] = time_once(fn)
                policy = RepeatPolicy(
                    min_repeats=5, max_repeats=200, budget_s=budget, cap_s=10 * budget
                )
                timings = measure_interleaved(peers, policy, warmup)
                row = {
                    "structure": structure,
                    "n": n,
                    "nnz": int(m.nnz),
                    "threads": count,
                    "case": name,
                    "seconds": {
                        p: t.median if not isinstance(t, Exception) else repr(t)
                        for p, t in timings.items()
                    },
                    "iqr": {p: t.iqr for p, t in timings.items() if not isinstance(t, Exception)},
                }
                rows.append(row)
                print(_line(row), flush=True)


def _ratio(row, peer):
    s = row["seconds"]
    if (
        peer not in s
        or not isinstance(s.get(peer), float)
        or not isinstance(s.get("coiter"), float)
    ):
        return None
    return s[peer] / s["coiter"]


def _line(row):
    s = row["seconds"]
    parts = [f"{row['structure']:>11} threads={row['threads']} {row['case']:<20}"]
    for peer in ("coiter", "scipy", "pydata"):
        if peer in s:
            parts.append(
                f"{peer} {s[peer] * 1e3:9.3f} ms"
                if isinstance(s[peer], float)
                else f"{peer} failed"
            )
    for peer in ("scipy", "pydata"):
        ratio = _ratio(row, peer)
        if ratio is not None:
            parts.append(f"{peer}/coiter {ratio:5.2f}x")
    return "  ".join(parts)


def markdown(rows, env):
    lines = [
        "# Array interface: coiter against SciPy and pydata/sparse",
        "",
        f"`python -m benchmarks.arrays {env.get('arguments', '')}`".replace(" `", "`"),
        "",
        f"Run {env.get('date', '')} on {env['processor']}, {env['cpus']} CPUs, "
        f"load average at the end {tuple(round(x, 2) for x in env['load_average_at_end'])}; "
        f"NumPy {env['numpy']}, SciPy {env['scipy']}, "
        f"pydata/sparse {env.get('sparse', 'not installed')}. Median milliseconds per call, "
        "peers interleaved, results checked against each other first; "
        "ratio > 1: coiter faster.",
        "",
        "| structure | nnz | threads | case | coiter (ms) | SciPy (ms) | pydata (ms) "
        "| SciPy ÷ coiter | pydata ÷ coiter |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ms = {
            peer: _milliseconds(row["seconds"].get(peer)) for peer in ("coiter", "scipy", "pydata")
        }
        ratio = {peer: _ratio_text(_ratio(row, peer)) for peer in ("scipy", "pydata")}
        lines.append(
            f"| {row['structure']} | {row['nnz']:,} | {row['threads']} | {row['case']} "
            f"| {ms['coiter']} | {ms['scipy']} | {ms['pydata']} "
            f"| {ratio['scipy']} | {ratio['pydata']} |"
        )
    return "\n".join(lines) + "\n"


def _milliseconds(value):
    """A peer's time for the table: milliseconds, "failed" or "–" (not run)."""
    return f"{value * 1e3:.3f}" if isinstance(value, float) else ("failed" if value else "–")


def _ratio_text(r):
    return f"{r:.2f}" if r is not None else "–"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--per-row", type=float, default=10.0)
    parser.add_argument(
        "--structures", nargs="+", default=["banded", "power_law"], choices=sorted(GENERATORS)
    )
    parser.add_argument("--threads", nargs="+", type=int, default=[ct.get_num_threads()])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--budget", type=float, default=1.0, help="seconds of timed calls per peer and case"
    )
    parser.add_argument("--output", default=str(RESULTS / "arrays"))
    parser.add_argument(
        "--no-pydata",
        action="store_true",
        help="leave pydata/sparse out (its first calls compile with numba for seconds)",
    )
    args = parser.parse_args(argv)
    rows = run(
        args.n,
        args.per_row,
        args.structures,
        args.threads,
        args.seed,
        args.budget,
        with_pydata=not args.no_pydata,
    )
    env = script_environment(argv, n=args.n, per_row=args.per_row)
    write_script_results(args.output, rows, env, markdown)
    return rows


if __name__ == "__main__":
    main()
