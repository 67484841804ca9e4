"""benchmarks/distributed.py runs on a one-worker LocalCluster, checks its peers against
single-process coiter and writes its table."""

import json

import pytest

pytest.importorskip("distributed")

from benchmarks import distributed as bench  # noqa: E402

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")


def test_distributed_benchmark_smoke_run(tmp_path):
    import coiter as ct

    threads = ct.get_num_threads()
    out = tmp_path / "distributed"
    rows = bench.main(
        [
            "--workers",
            "1",
            "--spmv-rows",
            "2000",
            "--spmv-nnz",
            "10000",
            "--spmm-rows",
            "1000",
            "--spgemm-rows",
            "1000",
            "--ttm-shape",
            "100",
            "50",
            "20",
            "--ttm-nnz",
            "2000",
            "--budget",
            "0.02",
            "--no-dask",
            "--output",
            str(out),
        ]
    )
    assert {row["kernel"] for row in rows} == {"SpMV", "SpMM", "SpGEMM", "TTM"}
    assert all(
        isinstance(row["seconds"]["dist"], float) and isinstance(row["seconds"]["coiter 1t"], float)
        for row in rows
    )
    saved = json.loads(out.with_suffix(".json").read_text())
    assert saved["rows"] == rows and saved["environment"]["arguments"].startswith("--workers 1")
    table = out.with_suffix(".md").read_text()
    assert "| SpMV | " in table and "Strong scaling" in table
    assert ct.get_num_threads() == threads  # the run's thread counts do not outlive it
