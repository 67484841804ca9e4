"""``T @ x`` never densifies: on a 1,000,000 × 1,000,000 matrix with 10 M nonzeros (a dense copy
would need 8 TB) the product's peak memory stays under twice the operands' memory.

Measured in a fresh process by the kernel's peak resident set (Linux: VmHWM, reset through
/proc/self/clear_refs after the operands are built, so building them does not count)."""

import json
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent("""
    import json, numpy as np, scipy.sparse as sp, coiter as ct

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024

    n, per_row = 1_000_000, 10
    small = ct.asarray(sp.random(50, 50, density=0.1, format="csr", random_state=0))
    np.asarray(small @ np.ones(50))   # compiles the kernel (not measured)
    base = rss("VmRSS:")
    rows = np.arange(n, dtype=np.int64)
    cols = (rows[:, None] * 7 + np.arange(per_row) * 99_991) % n
    cols.sort(axis=1)
    indices = cols.astype(np.int32).reshape(-1)
    del cols, rows
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int32)
    data = np.linspace(0.5, 1.5, n * per_row)
    T = ct.asarray(sp.csr_array((data, indices, indptr), shape=(n, n)))
    x = np.ones(n)
    operands = indptr.nbytes + indices.nbytes + data.nbytes + x.nbytes
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                      # peak RSS := current RSS
    before = rss("VmRSS:")
    y = np.asarray(T @ x)
    peak = rss("VmHWM:")
    expected = np.add.reduceat(data, indptr[:-1])
    print(json.dumps({"base": base, "before": before, "peak": peak, "operands": operands,
                      "result": y.nbytes, "correct": bool(np.allclose(y, expected))}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self (Linux)")
def test_matvec_on_a_million_rows_stays_within_twice_the_operands():
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    m = json.loads(done.stdout.strip().splitlines()[-1])
    assert m["correct"]
    # Everything the product holds at its peak, counted from before the operands existed:
    # the operands themselves, the result and any temporary.
    used = m["peak"] - m["base"]
    assert used < 2 * m["operands"], m
    # And the product itself adds little beyond its result.
    assert m["peak"] - m["before"] < m["result"] + 64 * 2**20, m
