"""Ctrl-C stops a long kernel (issue 17, item 7): a SIGINT sent to a process running a
kernel of several seconds raises KeyboardInterrupt within 0.5 s, keeps nothing of the
interrupted result, and leaves the process able to compute (runtime/interrupts.hpp,
ir/interrupt_points.hpp). Each case runs in a child process, which the test interrupts the
way a terminal or Jupyter does: os.kill(pid, SIGINT)."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np, scipy.sparse as sp
    import coiter as ct

    case, engine, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ct.set_num_threads(threads)
    rng = np.random.default_rng(0)
    if case == "dense":  # a dense product: no sparse level, loops of a plain matmul
        # 64 G multiply-adds: tens of seconds on 2 cores, so a fast machine cannot finish
        # it before the signal (n = 1600 once did, in 1 s on a CI machine).
        n = 4000
        A, B = rng.random((n, n)), rng.random((n, n))
        formats = {"A": "dd", "B": "dd", "C": "dd"}
        kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats=formats, engine=engine)
        run = lambda: kern(A=A, B=B)
        small = lambda: kern(A=np.eye(2), B=np.ones((2, 2))).to_numpy()
    else:  # SpGEMM, a sparse result assembled row by row (in chunks on 2 threads)
        n, per_row = 30000, 150
        rows = np.repeat(np.arange(n), per_row)
        cols = rng.integers(0, n, rows.size)
        A = sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, n))
        formats = {"A": "csr", "B": "csr", "C": "csr"}
        kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats=formats, engine=engine)
        run = lambda: kern(A=A, B=A)
        eye = sp.eye_array(2, format="csr")
        small = lambda: kern(A=eye, B=eye).to_numpy()
    y = ct.asarray(np.arange(5.0), name="y")
    small()  # the kernel is compiled and loaded before the long call starts
    print(json.dumps({"ready": time.time()}), flush=True)
    try:
        run()
        print(json.dumps({"finished": time.time()}), flush=True)
    except KeyboardInterrupt:
        print(json.dumps({"interrupted": time.time()}), flush=True)
    # Still usable: a new call computes, and a tensor from before is intact.
    print(json.dumps({"after": small().tolist(), "y": y.to_numpy().tolist()}), flush=True)
    """
)


@pytest.mark.parametrize(
    "case, engine, threads",
    [("dense", "llvm", 1), ("dense", "c", 2), ("spgemm", "llvm", 2), ("spgemm", "c", 1)],
)
def test_ctrl_c_stops_a_long_kernel(case, engine, threads):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, case, engine, str(threads)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = json.loads(child.stdout.readline())
        assert "ready" in ready, child.stderr.read()
        time.sleep(1.0)  # the kernel is running (each takes several seconds)
        sent = time.time()
        os.kill(child.pid, signal.SIGINT)
        stopped = json.loads(child.stdout.readline())
        after = json.loads(child.stdout.readline())
        assert child.wait(timeout=60) == 0, child.stderr.read()
    finally:
        child.kill()
    assert "interrupted" in stopped, f"the kernel ran to its end: {stopped}"
    assert stopped["interrupted"] - sent < 0.5
    assert after["y"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    expected = [[1.0, 1.0], [1.0, 1.0]] if case == "dense" else [[1.0, 0.0], [0.0, 1.0]]
    assert after["after"] == expected


def test_kernels_check_in_outer_loops_only():
    # The check is in the row loop of SpMV (once per row), not in its loop over a row's
    # nonzeros, which it would keep from vectorizing.
    import coiter as ct

    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine="c")
    c = kern.source("c")
    # The rows run in blocks whose coordinates are checked together, row by row, or (rows
    # that gather from far apart) each coordinate checked as it is loaded
    # (ir/guard_coordinates.cpp, checkedPerBlock): the two loops over blocks check once per
    # block (a block's rows, at most 32, do not check one by one), the loop row by row once
    # per row; after each of the three parallel loops, the kernel returns if the flag is set.
    checks = [m.start() for m in re.finditer(r"\*coiter_rt_interrupt_flag != 0", c)]
    returns = [at for at in checks if "return 5;" in c[at : at + 120]]
    assert len(returns) == 3 and len(checks) == 6
    loops = [c[c.rindex("for (", 0, at) :][:30] for at in checks if at not in returns]
    assert sorted(loop.split(" = ")[0] for loop in loops) == [
        "for (int64_t i",
        "for (int64_t i_block",
        "for (int64_t i_far_block",
    ], loops
    assert "for (int64_t i = i_first;" in c and "for (int64_t i = i_far_first;" in c
