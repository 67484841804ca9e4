"""The benchmark suite end to end in its smallest configuration, and its cross-check.

Runs ``python -m benchmarks --smoke`` (tiny data, one or two calls) with the fast peers
only (coiter with its tensors and with SciPy operands, and SciPy), and checks that the JSON
and the Markdown table are written and hold what the report promises, the union and
intersection kernels on every pattern included; runs the first-call section on two kernels;
checks the patterns themselves; then runs one case with a peer that computes a wrong result
and checks that the cross-check reports it as a failure and does not time it.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import patterns  # noqa: E402
from benchmarks import run as benchmarks_run  # noqa: E402
from benchmarks.checking import cross_check  # noqa: E402
from benchmarks.datasets import SPMV_BY_NAME, generate_matrix  # noqa: E402
from benchmarks.kernels import KERNELS_BY_NAME, select  # noqa: E402
from benchmarks.peers import CoiterPeer, CoiterScipyOperandsPeer, ScipyPeer  # noqa: E402
from benchmarks.suite import run_case, run_suite  # noqa: E402
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
    status = benchmarks_run.main(
        [
            "--smoke",
            "--peers",
            "coiter,coiter-scipy,scipy",
            "--threads",
            "1",
            "--sections",
            "stream,kernels,packing",
            "--no-plots",
            "--kernels",
            "spmv_csr,spmv_coo,spgemm_aa,spadd2,spadd3_disjoint,"
            "multiply_transpose,sddmm,mttkrp,ttm",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert status == 0
    result = json.loads((tmp_path / "smoke.json").read_text())
    assert result["mode"] == "smoke" and result["threads"] == [1]
    assert result["stream"]["by_threads"]["1"]["best_gbs"] > 0
    rows = result["kernels"]
    # A family name (spadd2) stands for the kernel on every pattern.
    assert {r["kernel"] for r in rows} == {
        "spmv_csr",
        "spmv_coo",
        "spgemm_aa",
        "spadd2_identical",
        "spadd2_half",
        "spadd2_disjoint",
        "spadd2_transpose",
        "spadd3_disjoint",
        "multiply_transpose",
        "sddmm",
        "mttkrp",
        "ttm",
    }
    for row in rows:
        coiter = row["peers"]["coiter"]
        assert coiter["status"] == "ok" and coiter["check"]["ok"], row
        assert coiter["timing"]["median"] > 0 and coiter["threads"] == 1
        as_users_call = row["peers"]["coiter-scipy"]
        if row["kernel"] in ("mttkrp", "ttm"):
            assert as_users_call["status"] == "unsupported"
            assert "matrix kernels only" in as_users_call["reason"]
        else:
            assert as_users_call["status"] == "ok" and as_users_call["check"]["ok"], row
        assert "first_call" not in row  # smoke mode runs it only when named
    spmv = next(r for r in rows if r["kernel"] == "spmv_csr")
    assert spmv["spmv_bytes"] > 0 and spmv["peers"]["coiter"]["stream_fraction"] > 0
    # SciPy has no MTTKRP: reported with the reason, not left out.
    mttkrp = next(r for r in rows if r["kernel"] == "mttkrp")
    assert (
        mttkrp["peers"]["scipy"]["status"] == "unsupported" and mttkrp["peers"]["scipy"]["reason"]
    )
    table = (tmp_path / "smoke.md").read_text()
    assert (
        "| kernel | data | threads | coiter | coiter (SciPy operands) | scipy "
        "| coiter: SciPy operands ÷ tensors |"
    ) in table
    assert "| SpAdd A+B (disjoint) |" in table and "| elementwise A∘B (B = Aᵀ) |" in table
    assert "n/a [" in table and "SciPy has no MTTKRP" in table


def test_first_call_section_runs_each_case_in_a_fresh_process(tmp_path):
    status = benchmarks_run.main(
        [
            "--smoke",
            "--peers",
            "coiter,coiter-scipy,scipy",
            "--threads",
            "1",
            "--sections",
            "kernels,first_call",
            "--no-plots",
            "--kernels",
            "spmv_csr,ttv",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert status == 0
    rows = json.loads((tmp_path / "smoke.json").read_text())["kernels"]
    assert len(rows) == 3  # two smoke matrices, one tensor
    for row in rows:
        first = row["first_call"]
        # The kernel came from the disk cache, and the first call agreed with the second.
        assert first["problems"] == [] and first["first_call_s"] > 0 and first["compile_s"] > 0
        assert first["operands"] == (
            "coiter" if row["kernel"] == "ttv" else "coiter (SciPy operands)"
        )
    assert (
        "| coiter first call, fresh process | its ct.compile (disk cache) |"
        in (tmp_path / "smoke.md").read_text()
    )


def _entries(matrix):
    coo = matrix.tocoo()
    return set(zip(coo.row.tolist(), coo.col.tolist()))


def test_patterns_place_the_partners_as_named():
    # Large enough that A's rows (about 39 entries) and two disjoint partners fit in the band.
    A = generate_matrix(SPMV_BY_NAME["bcsstk17"].scaled(8), seed=0).matrix
    rng = np.random.default_rng(0)
    B, D = patterns.partners("identical", A, 2, rng)
    assert _entries(B) == _entries(D) == _entries(A) and not np.array_equal(B.data, A.data)
    B, D = patterns.partners("disjoint", A, 2, rng)
    assert not (_entries(A) & _entries(B) or _entries(A) & _entries(D) or _entries(B) & _entries(D))
    assert min(B.nnz, D.nnz) > 0.99 * A.nnz
    B, D = patterns.partners("transpose", A, 2, rng)
    assert (B != A.T).nnz == 0 and _entries(D) == _entries(B)
    (B,) = patterns.partners("half", A, 1, rng)
    shared = len(_entries(A) & _entries(B))
    assert 0.3 * A.nnz < shared < 0.8 * A.nnz
    for partner in (B, D):
        assert partner.has_canonical_format and partner.indices.dtype == np.int32


def test_a_family_name_selects_every_pattern():
    assert [k.name for k in select(["multiply", "spmv_csr"])] == [
        "spmv_csr",
        "multiply_identical",
        "multiply_half",
        "multiply_disjoint",
        "multiply_transpose",
    ]
    with pytest.raises(ValueError, match="unknown kernels"):
        select(["spadd4"])


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
    peers = [CoiterPeer(), CoiterScipyOperandsPeer(), ScipyPeer(), WrongScipy()]
    rows = run_case(
        KERNELS_BY_NAME[kernel],
        data,
        peers,
        [1],
        TINY,
        np.random.default_rng(0),
        log=lambda text: None,
    )
    cells = rows[0]["peers"]
    assert cells["wrong"]["status"] == "mismatch" and "timing" not in cells["wrong"]
    assert "differs from" in cells["wrong"]["reason"]
    assert all(cells[name]["status"] == "ok" for name in ("coiter", "coiter-scipy", "scipy"))


def test_cross_check_without_dense_reference_trusts_the_majority():
    right, wrong = np.ones(4), np.array([1.0, 1.0, 1.0, 2.0])
    verdicts, reference = cross_check({"scipy": wrong, "coiter": right, "mkl": right})
    assert reference == "coiter"
    assert not verdicts["scipy"].ok and verdicts["coiter"].ok and verdicts["mkl"].ok


def test_paired_section_brackets_each_ratio_with_its_interval(tmp_path):
    status = benchmarks_run.main(
        [
            "--smoke",
            "--peers",
            "coiter,scipy",
            "--threads",
            "1",
            "--sections",
            "paired",
            "--no-plots",
            "--kernels",
            "spmv_csr,multiply_half",
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert status == 0
    records = json.loads((tmp_path / "smoke.json").read_text())["paired"]
    # Two smoke matrices (no tensors) times two kernels.
    assert sorted((r["data"], r["kernel"]) for r in records) == sorted(
        (data, kernel)
        for data in {r["data"] for r in records}
        for kernel in ("spmv_csr", "multiply_half")
    )
    assert len(records) == 4
    for r in records:
        assert r["coiter_s"] > 0 and r["scipy_s"] > 0 and r["pairs"] == 3
        assert r["ratio_low"] <= r["ratio"] <= r["ratio_high"]
    assert "paired, 1 thread" in (tmp_path / "smoke.md").read_text()


def test_suite_run_shows_a_progress_bar_over_its_cases(capsys):
    import coiter as ct

    pytest.importorskip("tqdm")
    saved = ct.config.progress
    ct.config.progress = True
    try:
        data = generate_matrix(SPMV_BY_NAME["bcsstk17"].scaled(64), seed=0)
        kernels = [KERNELS_BY_NAME["spmv_csr"], KERNELS_BY_NAME["spadd2_half"]]
        records = run_suite([data], kernels, [CoiterPeer(), ScipyPeer()], [1], TINY, seed=0)
    finally:
        ct.config.progress = saved
    assert {r["kernel"] for r in records} == {"spmv_csr", "spadd2_half"}
    captured = capsys.readouterr()
    assert "benchmark cases" in captured.err and "2/2" in captured.err
    assert "spmv_csr" in captured.out and "spadd2_half" in captured.out  # the log, above the bar
