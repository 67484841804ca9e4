"""benchmarks/arrays.py runs, checks the peers against each other and writes its table."""

import json

import pytest

from benchmarks import arrays

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")


def test_array_benchmark_smoke_run(tmp_path):
    import coiter as ct

    threads = ct.get_num_threads()
    out = tmp_path / "arrays"
    rows = arrays.main(
        [
            "--n",
            "3000",
            "--structures",
            "banded",
            "--threads",
            "1",
            "--budget",
            "0.02",
            "--no-pydata",
            "--output",
            str(out),
        ]
    )
    cases = {row["case"] for row in rows}
    assert cases == {"T @ x", "T + T", "T.T @ x", "(A + B) @ x", "CG solve"}
    assert all(
        isinstance(row["seconds"]["coiter"], float) and isinstance(row["seconds"]["scipy"], float)
        for row in rows
    )
    saved = json.loads(out.with_suffix(".json").read_text())
    assert saved["rows"] == rows and saved["environment"]["arguments"].startswith("--n 3000")
    table = out.with_suffix(".md").read_text()
    assert "| banded | " in table and "SciPy ÷ coiter" in table
    assert ct.get_num_threads() == threads  # the run's thread counts do not outlive it


def test_peers_that_disagree_fail_the_run(monkeypatch, tmp_path):
    real = arrays.cases

    def wrong(*args):
        table = real(*args)
        table["T @ x"]["scipy"] = lambda: 2 * table["T @ x"]["coiter"]()
        return table

    monkeypatch.setattr(arrays, "cases", wrong)
    with pytest.raises(AssertionError, match="disagrees"):
        arrays.main(
            [
                "--n",
                "500",
                "--structures",
                "banded",
                "--threads",
                "1",
                "--budget",
                "0.01",
                "--no-pydata",
                "--output",
                str(tmp_path / "arrays"),
            ]
        )
