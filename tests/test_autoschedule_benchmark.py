"""benchmarks/autoschedule.py runs, checks every schedule's result and writes its table."""

import json

from benchmarks import autoschedule


def test_autoschedule_benchmark_smoke_run(tmp_path, monkeypatch):
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path / "cache"))  # main makes its own
    out = tmp_path / "autoschedule"
    names = ["SpMV", "einsum YYt"]
    rows = autoschedule.main(
        ["--kernels", ",".join(names), "--scale", "0.02", "--budget", "0.2", "--output", str(out)]
    )
    assert [r["kernel"] for r in rows] == names
    for row in rows:
        assert row["default_ms"] > 0 and row["tuned_ms"] > 0 and row["auto_ms"] > 0
        # CPU-time medians decide the ratios; wall-time medians are kept beside them.
        assert set(row["wall_ms"]) >= {"default", "tuned", "auto"}
        wall = row["wall_ms"]
        assert row["auto_vs_default_wall"] == wall["default"] / wall["auto"]
        # The second process found every tuning and timed nothing.
        assert row["second_run_hit"] and row["second_run_timed"] == 0
    assert rows[0]["best_hand_ms"] > 0 and "scipy_ms" in rows[1]
    written = json.loads(out.with_suffix(".json").read_text())
    assert written["rows"] == rows
    assert "| SpMV |" in out.with_suffix(".md").read_text()


def test_shuffled_passes_time_every_call_in_changing_orders():
    order = []
    callables = {name: (lambda name=name: order.append(name)) for name in "abcd"}
    wall, cpu = autoschedule.measure_shuffled(callables, dict.fromkeys(callables, 1e-3))
    rounds = [tuple(order[k : k + 4]) for k in range(0, len(order), 4)]
    assert len(set(rounds)) > 1  # not one fixed order
    for name in callables:
        assert len(wall[name].runs) == len(cpu[name].runs) == order.count(name)
        assert order.count(name) >= autoschedule.PASSES * autoschedule.PASS_POLICY.min_repeats


def test_paper_benchmark_profiles_the_two_kernel_calls(tmp_path, monkeypatch):
    from benchmarks import autoschedule_paper

    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path / "cache"))  # main makes its own
    out = tmp_path / "paper"
    # (At 0.2, N = 409, the two-kernel member is estimated to do at least twice less work
    # than the default; at 0.1 auto keeps the default.)
    rows = autoschedule_paper.main(
        ["--kernels", "SpMV,SpGEMMH", "--scale", "0.2", "--profile", "--output", str(out)]
    )
    spmv, spgemmh = rows
    assert spmv["auto_profile_ms"] is None  # auto runs one kernel (the default's program)
    parts = spgemmh["auto_profile_ms"]
    kernels = [k for k in parts if k.startswith("kernel ")]
    assert len(kernels) == 2 and all(parts[k] > 0 for k in kernels)
    assert parts["whole call"] > 0 and "rest of the call (Python)" in parts
    assert "Where SpGEMMH's `auto` call goes" in out.with_suffix(".md").read_text()
