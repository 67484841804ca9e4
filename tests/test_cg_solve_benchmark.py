"""benchmarks/cg_solve.py runs: coiter's CG iterates agree with SciPy's (checked by the script
before it times), with OpenBLAS as it comes and limited by threadpoolctl."""

import pytest

from benchmarks import cg_solve

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")


@pytest.mark.parametrize("blas", [[], ["--blas-threads", "1"]])
def test_cg_solve_benchmark_smoke_run(capsys, blas):
    pytest.importorskip("threadpoolctl")
    cg_solve.main(["--sizes", "1e3", "--pairs", "1", "--iterations", "5", *blas])
    out = capsys.readouterr().out
    assert ("OpenBLAS threads 1" in out) == bool(blas)
    results = [line for line in out.splitlines() if "SciPy/coiter" in line]
    # two matrices, two spellings each
    assert len(results) == 4
    assert sum("cg(aslinearoperator(T))" in line for line in results) == 2
