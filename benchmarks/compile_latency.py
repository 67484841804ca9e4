"""Compile latency of CSR SpMV, ``y(i) = A(i,j) * x(j)``: coiter cold, warm in memory, and
from the disk cache in a fresh process; tensora (llvmlite) cold and warm; and the call
overhead of a cached kernel next to SciPy's ``A @ x``.

- cold: before each sample ``COITER_CACHE_DIR`` points at a new empty directory and
  ``ct.clear_cache(disk=True)`` empties both caches; only ``ct.compile`` is timed, and
  ``ct.cache_info()`` must show one compile and no disk hit. Sample 0 also starts the JIT
  and is reported apart (``first_in_process_s``).
- warm in memory: ``ct.compile`` of an equal signature again (a cache hit, no compile).
- fresh process, kernel on disk: new ``python`` processes import coiter and time their first
  ``ct.compile``; each must be a disk hit without a compile. The first process fills the
  cache and is not counted.
- tensora: ``tensor_method`` after clearing its in-memory ``lru_cache`` (its only cache),
  and again without clearing.
- TACO cannot be installed here; its ~130 ms for this kernel is quoted, not measured.
"""

import os
import tempfile

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .fresh_process import run_json
from .timing import Timing, time_call

EXPRESSION = "y(i) = A(i,j) * x(j)"
FORMATS = {"A": "csr", "x": "d", "y": "d"}
TACO_QUOTED_S = 0.130

# A fresh process: import coiter (outside the clock), then time its first compile.
CHILD = """
import json, numpy as np, coiter as ct
from benchmarks.timing import time_call
seconds, _ = time_call(lambda: ct.compile({expr!r}, formats={formats!r}, dtype=np.float64))
print(json.dumps({{"seconds": seconds, "cache": ct.cache_info()}}))
"""


def _compile():
    return ct.compile(EXPRESSION, formats=FORMATS, dtype=np.float64)


def _cache_delta(before, after):
    return {key: after[key] - before[key] for key in ("compiles", "disk_hits", "hits")}


def coiter_cold(samples, scratch):
    saved = os.environ.get("COITER_CACHE_DIR")
    runs, problems = [], []
    try:
        for sample in range(samples + 1):
            os.environ["COITER_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"cold-{sample}-", dir=scratch)
            ct.clear_cache(disk=True)
            before = ct.cache_info()
            seconds, _ = time_call(_compile)
            delta = _cache_delta(before, ct.cache_info())
            if delta["compiles"] != 1 or delta["disk_hits"] != 0:
                problems.append(f"sample {sample}: {delta}")
            runs.append(seconds)
    finally:
        if saved is None:
            os.environ.pop("COITER_CACHE_DIR", None)
        else:
            os.environ["COITER_CACHE_DIR"] = saved
    return {
        "timing": Timing.of(runs[1:]).as_dict(),
        "first_in_process_s": runs[0],
        "problems": problems,
    }


def coiter_warm_memory(samples):
    _compile()
    runs, problems = [], []
    for sample in range(samples):
        before = ct.cache_info()
        seconds, _ = time_call(_compile)
        if _cache_delta(before, ct.cache_info())["hits"] != 1:
            problems.append(f"sample {sample}: not a memory hit")
        runs.append(seconds)
    return {"timing": Timing.of(runs).as_dict(), "problems": problems}


def coiter_fresh_process(processes, scratch):
    env = {"COITER_CACHE_DIR": tempfile.mkdtemp(prefix="disk-", dir=scratch)}
    code = CHILD.format(expr=EXPRESSION, formats=FORMATS)
    runs, problems = [], []
    for process in range(processes + 1):
        report = run_json(["-c", code], env)
        if process == 0:
            continue  # this one filled the disk cache
        cache = report["cache"]
        if cache["disk_hits"] != 1 or cache["compiles"] != 0:
            problems.append(
                f"process {process}: {cache['compiles']} compiles, {cache['disk_hits']} disk hits"
            )
        runs.append(report["seconds"])
    return {"timing": Timing.of(runs).as_dict(), "problems": problems}


def tensora_latency(samples):
    import tensora
    from tensora.compile._porcelain import cachable_tensor_method

    formats = {"A": "ds", "x": "d", "y": "d"}
    cold = []
    for _ in range(samples + 1):
        cachable_tensor_method.cache_clear()
        cold.append(time_call(lambda: tensora.tensor_method(EXPRESSION, formats))[0])
    warm = [
        time_call(lambda: tensora.tensor_method(EXPRESSION, formats))[0] for _ in range(samples)
    ]
    return {
        "cold": {"timing": Timing.of(cold[1:]).as_dict(), "first_in_process_s": cold[0]},
        "warm_memory": {"timing": Timing.of(warm).as_dict()},
    }


def call_overhead(number, repeat):
    """Seconds per call of a cached coiter SpMV kernel on a 4 x 4 matrix, and SciPy's: with
    coiter tensors, with a NumPy x (read in place), and with SciPy's A as well (wrapped and
    validated on each call)."""
    rng = np.random.default_rng(0)
    M = sp.random_array((4, 4), density=0.5, format="csr", random_state=rng)
    x = rng.random(4)
    kern, A, X = _compile(), ct.asarray(M), ct.asarray(x)
    assert np.allclose(np.asarray(kern(A=A, x=X)), M @ x)

    def per_call(fn):
        return [time_call(lambda: [fn() for _ in range(number)])[0] / number for _ in range(repeat)]

    return {
        "coiter": Timing.of(per_call(lambda: kern(A=A, x=X))).as_dict(),
        "coiter_numpy_x": Timing.of(per_call(lambda: kern(A=A, x=x))).as_dict(),
        "coiter_scipy_a": Timing.of(per_call(lambda: kern(A=M, x=x))).as_dict(),
        "scipy": Timing.of(per_call(lambda: M @ x)).as_dict(),
        "shape": [4, 4],
    }


def measure(samples, processes, number, repeat, log=print):
    """Every measurement of this module; a failing one is recorded with its error."""
    result = {
        "expression": EXPRESSION,
        "formats": FORMATS,
        "engine": ct.compiler.default_engine(),
        "taco_quoted_s": TACO_QUOTED_S,
        "errors": {},
    }
    with tempfile.TemporaryDirectory(prefix="coiter-bench-compile-") as scratch:
        steps = {
            "coiter_cold": lambda: coiter_cold(samples, scratch),
            "coiter_warm_memory": lambda: coiter_warm_memory(samples),
            "coiter_fresh_process_disk": lambda: coiter_fresh_process(processes, scratch),
            "tensora": lambda: tensora_latency(samples),
            "call_overhead": lambda: call_overhead(number, repeat),
        }
        for name, step in steps.items():
            log(f"  compile latency: {name} ...")
            try:
                result[name] = step()
            except Exception as error:  # recorded, and shown in the report
                detail = getattr(error, "stderr", "") or ""
                result["errors"][name] = f"{type(error).__name__}: {error} {detail}".strip()
    return result
