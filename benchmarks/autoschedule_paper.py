"""The kernels of the asymptotic-cost-model paper (Ahrens, Kjolstad and Amarasinghe, PLDI 2022,
§7) at its sizes and density, one thread: the alphabetical default (the paper's baseline),
today's default schedule, ``schedule="auto"`` and SciPy's composition of the same product,
as ratios measured in one run.

    python -m benchmarks.autoschedule_paper [--kernels SpGEMMH,SpGEMM2] [--scale 1] [--profile]
                                            [--output benchmarks/results/autoschedule-paper]

Inputs as in the paper's artifact: uniform random patterns of density p = 0.01, all extents
N (the first power of two at which TACO's default took over a second: SpMV and SpMV2 16384,
SpGEMM 4096, SpGEMM2 and SpGEMMH 2048, SpMTTKRP 512); matrices CSR (a dense first mode, a
compressed second), the 3-tensor CSF (``dss``), vectors dense. Each variant is one
``ct.evaluate`` call (so each pays the same per-call overhead):

- *alphabetical*: ``reorder`` of the index variables in alphabetical order, TACO's default,
  on the operands stored in the order those loops read them (a matrix indexed ``C(k,j)`` as
  CSC, converted before the timing: as in the paper, the baseline is the kernel alone);
- *default*: coiter's default schedule today;
- *auto*: ``schedule="auto"`` with an empty tuning database, so the frontier member cheapest
  on the inputs' statistics (its first call, which builds the frontier and compiles, is
  reported apart);
- *scipy*: the same product composed of SciPy's operations (``(B @ C) @ D``, ``B @ C.multiply(D)``,
  ``B @ (C @ d)``; SpMTTKRP, which SciPy cannot hold as a 3-tensor, as the unfolded
  ``B(ik,l) @ D`` multiplied elementwise by C tiled over i and summed over k by a sparse
  product).

``--profile`` also splits ``auto``'s call where it runs a frontier member of two kernels: each
operand conversion and each kernel, timed interleaved with the whole call, and the rest.

Results are checked against each other (SciPy's as the reference). Calls are timed
interleaved; a call of several seconds is timed once or twice (benchmarks/timing.py).
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .environment import script_environment, write_script_results
from .timing import RepeatPolicy, measure_interleaved, time_once

DENSITY = 0.01
# The paper's artifact: the first power of two at which TACO's default took over a second.
SIZES = {
    "SpMV": 16384,
    "SpMV2": 16384,
    "SpGEMM": 4096,
    "SpGEMM2": 2048,
    "SpGEMMH": 2048,
    "SpMTTKRP": 512,
}
# A slow baseline (seconds a call) is timed once or twice: cap_s bounds each variant.
POLICY = RepeatPolicy(min_repeats=5, max_repeats=30, budget_s=1.0, cap_s=4.0)


def _matrix(n, seed):
    return sp.random_array((n, n), density=DENSITY, format="csr", random_state=seed)


def _tensor3(n, seed):
    rng = np.random.default_rng(seed)
    nnz = int(DENSITY * n**3)
    flat = np.unique(rng.integers(0, n**3, nnz))
    coords = np.stack(np.unravel_index(flat, (n, n, n)), axis=1)
    return ct.from_coords(coords, rng.random(len(flat)), (n, n, n), format="dss")


def _mttkrp_scipy(B, C, D):
    """A(i,j) = Σ_kl B(i,k,l) C(k,j) D(l,j) from SciPy's matrix operations: B unfolded to
    rows (i,k), times D; elementwise by C tiled over i; summed over k by a sparse product."""
    n_i, n_k, n_l = B.shape
    coords, values = B.coords()
    unfolded = sp.csr_array(
        (values, (coords[:, 0] * n_k + coords[:, 1], coords[:, 2])), shape=(n_i * n_k, n_l)
    )
    tiled = sp.vstack([C] * n_i, format="csr")
    summing = sp.kron(sp.eye_array(n_i, format="csr"), np.ones((1, n_k)), format="csr")
    return summing @ (unfolded @ D).multiply(tiled)


def case(name, n):
    """(statement, operands, alphabetical schedule, SciPy composition) of a kernel at N = n."""
    rng = np.random.default_rng(0)
    B, C, D = _matrix(n, 1), _matrix(n, 2), _matrix(n, 3)
    if name == "SpMV":
        c = rng.random(n)
        return "a(i) = B(i,j) * c(j)", {"B": B, "c": c}, "reorder(i,j)", lambda: B @ c
    if name == "SpMV2":
        d = rng.random(n)
        return (
            "a(i) = B(i,j) * C(j,k) * d(k)",
            {"B": B, "C": C, "d": d},
            "reorder(i,j,k)",
            lambda: B @ (C @ d),
        )
    if name == "SpGEMM":
        return "A(i,j) = B(i,k) * C(k,j)", {"B": B, "C": C}, "reorder(i,j,k)", lambda: B @ C
    if name == "SpGEMM2":
        return (
            "A(i,j) = B(i,k) * C(k,l) * D(l,j)",
            {"B": B, "C": C, "D": D},
            "reorder(i,j,k,l)",
            lambda: (B @ C) @ D,
        )
    if name == "SpGEMMH":
        return (
            "A(i,j) = B(i,k) * C(k,j) * D(k,j)",
            {"B": B, "C": C, "D": D},
            "reorder(i,j,k)",
            lambda: B @ C.multiply(D),
        )
    B3 = _tensor3(n, 4)
    return (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": B3, "C": C, "D": D},
        "reorder(i,j,k,l)",
        lambda: _mttkrp_scipy(B3, C, D),
    )


def alphabetically_stored(stmt, operands):
    """The operands stored in the order the alphabetical loops read them: a matrix indexed
    against that order (``C(k,j)``) as CSC, converted here, outside the timed calls, as
    TACO's default kernels read their operands in loop order."""
    from coiter.notation import accesses
    from coiter.parser import parse

    stored = dict(operands)
    for access in accesses(parse(stmt)[0].rhs):
        names = [v.name for v in access.indices]
        if len(names) == 2 and names != sorted(names):
            stored[access.tensor.name] = ct.asarray(operands[access.tensor.name]).asformat("ds:1,0")
    return stored


def _dense(value):
    if isinstance(value, ct.Tensor):
        return value.to_numpy()
    return value.toarray() if sp.issparse(value) else np.asarray(value)


def _auto_choice(stmt, operands):
    """What schedule="auto" runs: the frontier member it picked, or the default schedule (when
    that member is the default's program or saves less than a factor 2 on it)."""
    from coiter.autosched.api import instant_choice, ranked_members
    from coiter.autosched.candidates import Problem, frontier_bases

    tensors = {n: ct.asarray(t) for n, t in operands.items()}
    evaluated = ct.evaluate(stmt, **tensors)  # (the result format ct.evaluate infers)
    formats = {n: t.format for n, t in tensors.items()}
    formats[evaluated.name] = evaluated.format
    problem = Problem.of(stmt, formats)
    bases, why_not = frontier_bases(problem)
    ranked = ranked_members(problem, bases, tensors)
    if not ranked:
        return f"(no frontier: {why_not})"
    chosen, conversions = instant_choice.for_operands(
        problem.parsed, tensors, problem.formats, problem.dtypes, None
    )
    picked = ranked[0]
    if chosen == "" and not conversions:
        cheapest = picked.candidate.schedule if picked.candidate else picked.member.program
        return f"the default schedule (the cheapest member: #{picked.member.index} {cheapest})"
    if picked.candidate is None:
        kernels = " ; ".join(
            f"{s.statement} {s.schedule} {s.formats}" for s in picked.member.stages
        )
        return f"#{picked.member.index} {picked.member.program} = {kernels}"
    converted = "".join(f" [{n}→{f}]" for n, f in conversions.items())
    return f"#{picked.member.index} {picked.candidate.schedule}{converted} ({chosen})"


def pipeline_profile(stmt, operands):
    """Where a call of ``schedule="auto"`` goes when it runs a frontier member of two kernels:
    {part: median ms} for each operand conversion and each kernel of the pipeline (timed
    interleaved with the whole call), and the rest of the call (Python: the statistics, the
    choice's lookup, argument handling). None when ``auto`` runs one kernel."""
    from coiter.autosched.api import instant_choice
    from coiter.conversion import as_tensor
    from coiter.notation import accesses
    from coiter.parser import parse

    tensors = {n: ct.asarray(t) for n, t in operands.items()}
    ct.evaluate(stmt, schedule="auto", **tensors)  # (the choice, compiled and remembered)
    parsed = parse(stmt)
    formats = {n: t.format for n, t in tensors.items()}
    result = parsed[0].lhs.tensor.name
    formats[result] = ct.evaluate(stmt, **tensors).format
    dtypes = {n: np.dtype(np.float64) for n in parsed[1]}
    picked, _ = instant_choice.for_operands(parsed, tensors, formats, dtypes, None)
    if isinstance(picked, str):
        return None
    callables = {"whole call": lambda: ct.evaluate(stmt, schedule="auto", **tensors)}
    values = dict(tensors)
    for k, (stage, kern) in enumerate(zip(picked.stages, picked.kernels, strict=True)):
        inputs = {}
        for a in accesses(parse(stage.statement)[0].rhs):
            name = a.tensor.name
            given = as_tensor(values[name])
            fmt = stage.formats.get(name)
            inputs[name] = given if fmt is None else given.asformat(fmt)
            if inputs[name] is not given:
                callables[f"convert {name} to {fmt}"] = lambda t=given, f=fmt: t.asformat(f)
        callables[f"kernel {k + 1}: {stage.statement}"] = lambda kern=kern, i=inputs: kern(**i)
        values[stage.result] = kern(**inputs)
    warm = {label: time_once(call) for label, call in callables.items()}
    timings = measure_interleaved(callables, POLICY, warm)
    parts = {label: t.median * 1e3 for label, t in timings.items()}
    parts["rest of the call (Python)"] = parts["whole call"] - sum(
        v for label, v in parts.items() if label != "whole call"
    )
    return parts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/autoschedule-paper")
    parser.add_argument("--kernels", default="", help="comma-separated names (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="N times this")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also time the parts of auto's call where it runs two kernels",
    )
    args = parser.parse_args(argv)
    names = [k for k in args.kernels.split(",") if k]
    unknown = set(names) - set(SIZES)
    if unknown:
        raise SystemExit(f"unknown kernels {sorted(unknown)}; they are {sorted(SIZES)}")
    os.environ["COITER_CACHE_DIR"] = tempfile.mkdtemp(prefix="coiter-autoschedule-paper-")
    ct.clear_tuning()
    ct.set_num_threads(1)
    rows = []
    for name, size in SIZES.items():
        if names and name not in names:
            continue
        n = max(16, int(size * args.scale))
        stmt, operands, alphabetical, scipy_call = case(name, n)
        expected = _dense(scipy_call())
        stored = alphabetically_stored(stmt, operands)
        callables = {
            "alphabetical": lambda s=stmt, o=stored, a=alphabetical: ct.evaluate(
                s, schedule=a, **o
            ),
            "default": lambda s=stmt, o=operands: ct.evaluate(s, schedule="default", **o),
            "auto": lambda s=stmt, o=operands: ct.evaluate(s, schedule="auto", **o),
            "scipy": scipy_call,
        }
        warm, first = {}, {}
        for label, call in callables.items():
            start = time.perf_counter()
            result = call()
            first[label] = time.perf_counter() - start
            np.testing.assert_allclose(_dense(result), expected, rtol=1e-9, err_msg=label)
            del result
            # The repeat count follows a warm call (a first call compiles, and auto's builds
            # the frontier), unless the first already took seconds.
            warm[label] = first[label] if first[label] > 1.0 else time_once(call)
        timings = measure_interleaved(callables, POLICY, warm)
        seconds = {k: t.median for k, t in timings.items()}
        row = {
            "kernel": name,
            "statement": stmt,
            "N": n,
            "density": DENSITY,
            **{f"{k}_ms": v * 1e3 for k, v in seconds.items()},
            "calls": {k: len(t.runs) for k, t in timings.items()},
            "auto_first_call_s": first["auto"],
            "auto_vs_alphabetical": seconds["alphabetical"] / seconds["auto"],
            "auto_vs_default": seconds["default"] / seconds["auto"],
            "auto_vs_scipy": seconds["scipy"] / seconds["auto"],
            "default_vs_scipy": seconds["scipy"] / seconds["default"],
            "auto_choice": _auto_choice(stmt, operands),
            "auto_profile_ms": pipeline_profile(stmt, operands) if args.profile else None,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    env = script_environment(argv, threads=1, density=DENSITY, scale=args.scale)
    write_script_results(args.output, rows, env, markdown)
    return rows


# The paper's speedups of its best frontier kernel over TACO's alphabetical default (artifact
# reference results at these sizes, p = 0.01).
PAPER_SPEEDUPS = {
    "SpMV": 1.0,
    "SpMV2": 82,
    "SpGEMM": 21,
    "SpGEMM2": 59,
    "SpGEMMH": 2600,
    "SpMTTKRP": 119,
}


def markdown(rows, env):
    lines = [
        "# The paper's kernels: alphabetical default, today's default, `schedule=\"auto\"`, SciPy",
        "",
        f"`python -m benchmarks.autoschedule_paper` ({env.get('arguments') or 'defaults'}), "
        f"one thread, density {env['density']}, {env.get('date', '')}. Medians of interleaved "
        "calls; ratios > 1 mean `auto` is faster. *alphabetical* is TACO's default (the "
        "paper's baseline), *default* coiter's default schedule, *auto* `schedule=\"auto\"` "
        "without a tuning (the frontier member cheapest on the inputs' statistics), *scipy* "
        "the same product composed of SciPy operations.",
        "",
        "| kernel | N | alphabetical ms | default ms | auto ms | scipy ms | auto/alphabetical "
        "(paper) | auto/default | auto/scipy | default/scipy | auto 1st call s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kernel']} | {r['N']} | {r['alphabetical_ms']:.4g} | {r['default_ms']:.4g} | "
            f"{r['auto_ms']:.4g} | {r['scipy_ms']:.4g} | {r['auto_vs_alphabetical']:.3g}× "
            f"({PAPER_SPEEDUPS[r['kernel']]:g}×) | {r['auto_vs_default']:.2f}× | "
            f"{r['auto_vs_scipy']:.2f}× | {r['default_vs_scipy']:.2f}× | "
            f"{r['auto_first_call_s']:.2f} |"
        )
    lines += ["", "What `auto` picked:", ""]
    lines += [f"- {r['kernel']}: `{r['auto_choice']}`" for r in rows]
    for r in rows:
        if r.get("auto_profile_ms"):
            lines += ["", f"Where {r['kernel']}'s `auto` call goes (medians, interleaved):", ""]
            lines += [f"- {part}: {ms:.3g} ms" for part, ms in r["auto_profile_ms"].items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
