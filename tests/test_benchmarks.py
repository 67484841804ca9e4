"""The benchmark suite end to end in its smallest configuration, and its cross-check.

Runs ``python -m benchmarks --smoke`` (tiny data, one or two calls) with the fast peers
only, and checks that the JSON and the Markdown table are written and hold what the
report promises; then runs one case with a peer that computes a wrong result and checks
that the cross-check reports it as a failure and does not time it.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import run as benchmarks_run  # noqa: E402
from benchmarks.checking import cross_check  # noqa: E402
from benchmarks.datasets import SPMV_BY_NAME, generate_matrix  # noqa: E402
from benchmarks.kernels import KERNELS_BY_NAME  # noqa: E402
from benchmarks.peers import CoiterPeer, ScipyPeer  # noqa: E402
from benchmarks.suite import run_case  # noqa: E402
from benchmarks.timing import RepeatPolicy  # noqa: E402

TINY = RepeatPolicy(min_repeats=1, max_repeats=2, budget_s=0.01, cap_s=0.1)


@pytest.fixture(autouse=True)
def restore_num_threads():
    """Benchmark rows set coiter's thread count; later tests expect the default."""
    import coiter as ct
    saved = ct.get_num_threads()
    yield
    ct.set_num_threads(saved)


def test_smoke_run_writes_json_and_markdown(tmp_path):
    status = benchmarks_run.main(["--smoke", "--peers", "coiter,scipy", "--threads", "1",
                                  "--sections", "stream,kernels,packing", "--no-plots",
                                  "--kernels", "spmv_csr,spmv_coo,spgemm_aa,spadd3,sddmm,mttkrp,ttm",
                                  "--output-dir", str(tmp_path)])
    assert status == 0
    result = json.loads((tmp_path / "smoke.json").read_text())
    assert result["mode"] == "smoke" and result["threads"] == [1]
    assert result["stream"]["by_threads"]["1"]["best_gbs"] > 0
    rows = result["kernels"]
    assert {r["kernel"] for r in rows} == {"spmv_csr", "spmv_coo", "spgemm_aa", "spadd3",
                                           "sddmm", "mttkrp", "ttm"}
    for row in rows:
        coiter = row["peers"]["coiter"]
        assert coiter["status"] == "ok" and coiter["check"]["ok"], row
        assert coiter["timing"]["median"] > 0 and coiter["threads"] == 1
    spmv = next(r for r in rows if r["kernel"] == "spmv_csr")
    assert spmv["spmv_bytes"] > 0 and 0 < spmv["peers"]["coiter"]["stream_fraction"]
    # SciPy has no MTTKRP: reported with the reason, not left out.
    mttkrp = next(r for r in rows if r["kernel"] == "mttkrp")
    assert mttkrp["peers"]["scipy"]["status"] == "unsupported" and mttkrp["peers"]["scipy"]["reason"]
    table = (tmp_path / "smoke.md").read_text()
    assert "| kernel | data | threads | coiter | scipy |" in table
    assert "n/a [" in table and "SciPy has no MTTKRP" in table


class WrongScipy(ScipyPeer):
    """SciPy, but every result is off by one in its first entry."""
    name = "wrong"

    def prepare(self, kernel, operands):
        call = super().prepare(kernel, operands)

        def wrong():
            result = call()
            result = result.copy()
            if hasattr(result, "data"):
                result.data[0] += 1.0
            else:
                result.flat[0] += 1.0
            return result
        return wrong


@pytest.mark.parametrize("kernel", ["spmv_csr", "spgemm_aa"])
def test_cross_check_reports_a_wrong_result(kernel):
    data = generate_matrix(SPMV_BY_NAME["bcsstk17"].scaled(64), seed=0)
    peers = [CoiterPeer(), ScipyPeer(), WrongScipy()]
    rows = run_case(KERNELS_BY_NAME[kernel], data, peers, [1], TINY,
                    np.random.default_rng(0), log=lambda text: None)
    cells = rows[0]["peers"]
    assert cells["wrong"]["status"] == "mismatch" and "timing" not in cells["wrong"]
    assert "differs from" in cells["wrong"]["reason"]
    assert cells["coiter"]["status"] == "ok" and cells["scipy"]["status"] == "ok"


def test_cross_check_without_dense_reference_trusts_the_majority():
    right, wrong = np.ones(4), np.array([1.0, 1.0, 1.0, 2.0])
    verdicts, reference = cross_check({"scipy": wrong, "coiter": right, "mkl": right})
    assert reference == "coiter"
    assert not verdicts["scipy"].ok and verdicts["coiter"].ok and verdicts["mkl"].ok



def test_paired_section_brackets_each_ratio_with_its_interval(tmp_path):
    status = benchmarks_run.main(["--smoke", "--peers", "coiter,scipy", "--threads", "1",
                                  "--sections", "paired", "--no-plots", "--kernels", "spmv_csr,multiply",
                                  "--output-dir", str(tmp_path)])
    assert status == 0
    records = json.loads((tmp_path / "smoke.json").read_text())["paired"]
    # Two smoke matrices (no tensors) times two kernels.
    assert sorted((r["data"], r["kernel"]) for r in records) == sorted(
        (data, kernel) for data in {r["data"] for r in records} for kernel in ("spmv_csr", "multiply"))
    assert len(records) == 4
    for r in records:
        assert r["coiter_s"] > 0 and r["scipy_s"] > 0 and r["pairs"] == 3
        assert r["ratio_low"] <= r["ratio"] <= r["ratio_high"]
    assert "paired, 1 thread" in (tmp_path / "smoke.md").read_text()
