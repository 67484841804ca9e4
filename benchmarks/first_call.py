"""The first call of a kernel in a fresh process, with the kernel already in coiter's disk
cache: what a script that runs once sees, next to the steady state the tables time.

For one (kernel, data set), after the suite compiled the kernel in this process (which put it
in the disk cache), the operands are written to a scratch folder and one new process
(``fresh_process``) imports coiter, loads them (outside the clock), and times
``ct.compile`` (a disk-cache hit: loading the kernel's shared library) and then the first
call, with the operands as a user passes them: the SciPy matrices and NumPy arrays
themselves for matrix kernels, a coiter CSF tensor (built before the clock) for tensor
kernels. It calls once more and checks that both calls agree (the steady-state result was
checked against the other libraries already), and reports ``ct.cache_info()``: the compile
must be one disk hit, and nothing may be compiled; the first call may load another variant
of the kernel from the disk (a result of more than 2³¹ positions, rows times columns, gets
64-bit indices), which is part of what it costs. The process runs coiter on the given thread
count (the run's largest: coiter's default is every core).

Run as ``python -m benchmarks.first_call FOLDER`` it is that child.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .checking import agree
from .datasets import TensorData
from .fresh_process import run_json
from .kernels import KERNELS_BY_NAME
from .peers import CoiterPeer, CoiterScipyOperandsPeer
from .timing import time_call

CASE_FILE = "case.json"


def _save_operands(operands, folder):
    for name, operand in operands.items():
        if isinstance(operand, TensorData):
            np.savez(
                folder / f"{name}.tensor.npz",
                coords=operand.coords,
                values=operand.values,
                shape=np.array(operand.shape),
            )
        elif sp.issparse(operand):
            sp.save_npz(folder / f"{name}.sparse.npz", operand, compressed=False)
        else:
            np.save(folder / f"{name}.npy", operand)


def _load_operands(folder):
    operands = {}
    for path in folder.iterdir():
        name, kind = path.name.split(".", 1)
        if kind == "tensor.npz":
            with np.load(path) as saved:
                operands[name] = TensorData(
                    name,
                    str(path),
                    tuple(saved["shape"].tolist()),
                    saved["coords"],
                    saved["values"],
                )
        elif kind == "sparse.npz":
            operands[name] = sp.load_npz(path)
        elif kind == "npy":
            operands[name] = np.load(path)
    return operands


def _peer_for(kernel):
    """How a user passes this kernel's operands (the coiter peer that does the same)."""
    return CoiterScipyOperandsPeer() if kernel.on == "matrix" else CoiterPeer()


def measure(kernel, operands, threads):
    """The first call of ``kernel`` on ``operands`` in a fresh process: its seconds, the
    seconds of its ``ct.compile`` from the disk cache, and what went wrong (``problems``);
    or ``{"error": ...}`` when the process failed."""
    with tempfile.TemporaryDirectory(prefix="coiter-bench-first-call-") as scratch:
        folder = Path(scratch)
        _save_operands(operands, folder)
        (folder / CASE_FILE).write_text(json.dumps({"kernel": kernel.name, "threads": threads}))
        try:
            report = run_json(["-m", "benchmarks.first_call", str(folder)])
        except subprocess.CalledProcessError as error:
            last_lines = " ".join(error.stderr.strip().splitlines()[-3:])
            return {
                "error": f"the fresh process failed ({error.returncode}): {last_lines}",
                "threads": threads,
            }
    problems = []
    compile_cache, call_cache = report["compile_cache"], report["call_cache"]
    if compile_cache["disk_hits"] != 1 or compile_cache["compiles"] or call_cache["compiles"]:
        problems.append(
            f"the kernel did not come from the disk cache alone: ct.compile "
            f"{compile_cache}, first call {call_cache}"
        )
    if not report["calls_agree"]:
        problems.append(f"the first call's result differs from the second's: {report['detail']}")
    return {
        "first_call_s": report["first_call_s"],
        "compile_s": report["compile_s"],
        "variants_loaded_by_first_call": call_cache["disk_hits"],
        "operands": report["operands"],
        "threads": threads,
        "problems": problems,
    }


def child(folder):
    """The fresh process's side: the JSON record ``measure`` reads."""
    case = json.loads((folder / CASE_FILE).read_text())
    kernel = KERNELS_BY_NAME[case["kernel"]]
    peer = _peer_for(kernel)
    arguments = peer.arguments(kernel, _load_operands(folder))
    ct.set_num_threads(case["threads"])
    compile_cache, (compile_s, kern) = _counting_cache(
        lambda: time_call(lambda: peer.compile(kernel))
    )
    call_cache, (first_call_s, first) = _counting_cache(
        lambda: time_call(lambda: kern(**arguments))
    )
    same, _, detail = agree(peer.comparable(first), peer.comparable(kern(**arguments)))
    return {
        "compile_s": compile_s,
        "first_call_s": first_call_s,
        "compile_cache": compile_cache,
        "call_cache": call_cache,
        "calls_agree": bool(same),
        "detail": detail,
        "operands": peer.label,
    }


def _counting_cache(step):
    """(compiles and disk hits of coiter's kernel cache during ``step``, its result)."""
    before = ct.cache_info()
    result = step()
    after = ct.cache_info()
    return {key: after[key] - before[key] for key in ("compiles", "disk_hits")}, result


if __name__ == "__main__":
    print(json.dumps(child(Path(sys.argv[1]))))
