"""The command-line tool (``python -m coiter``, docs/cli.md), run in a subprocess as users run it:
what it prints against the Python API's own answers, the results it writes against NumPy and
SciPy, and bad input ending in one message and exit status 2."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import coiter as ct
from coiter import cli

ROOT = Path(__file__).resolve().parents[1]
SPMV = "y(i) = A(i,j) * x(j)"


def coiter(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coiter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def ok(*args: str, cwd: Path | None = None) -> str:
    done = coiter(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_without_options_it_prints_the_generated_c():
    out = ok(SPMV, "-f", "A:csr")
    kernel = ct.compile(SPMV, formats={"A": "csr"})
    assert out == kernel.source("c").rstrip() + "\n"
    assert "A2_pos" in out and "#pragma omp parallel for" in out


def test_printed_stages_are_the_kernels():
    schedule = "split(i,i0,i1,32); parallelize(i0,cpu_thread,no_races)"
    out = ok(SPMV, "-f", "A:ds", "-s", schedule, "-p", "concrete", "-p", "llvm")
    kernel = ct.compile(SPMV, formats={"A": "ds"}, schedule=schedule)
    assert out == kernel.concrete.rstrip() + "\n" + kernel.source("llvm").rstrip() + "\n"
    assert "i0: parallel(cpu_thread,no_races" in out and "define " in out

    stages = ok(SPMV, "-f", "A:csr", "-p", "stages")
    for name, text in ct.compile(SPMV, formats={"A": "csr"}).stages.items():
        assert f"=== {name} ===\n{text.rstrip()}" in stages
    lattices = ok(SPMV, "-f", "A:csr", "-p", "lattices")
    assert (
        lattices.rstrip()
        == ct.compile(SPMV, formats={"A": "csr"}).stages["iteration lattices"].rstrip()
    )


def test_schedule_commands_given_separately_apply_in_order():
    out = ok(
        SPMV, "-f", "A:ds", "-s", "split(i,i0,i1,16)", "-s", "reorder(i1,i0)", "-p", "concrete"
    )
    kernel = ct.compile(SPMV, formats={"A": "ds"}, schedule="split(i,i0,i1,16); reorder(i1,i0)")
    assert out.rstrip() == kernel.concrete.rstrip()


def test_generated_operands_and_the_result_written_to_files(tmp_path):
    ok(SPMV, "-f", "A:csr", "-d", "i:70", "-d", "j:50", "--density", "A:0.1", "--seed", "3",
       "-o", "A:A.mtx", "-o", "x:x.tns", "-o", "y:y.tns", cwd=tmp_path)  # fmt: skip
    A = scipy.io.mmread(tmp_path / "A.mtx")
    assert A.shape == (70, 50) and A.nnz == 350  # round(0.1 * 70 * 50) entries
    x = ct.read(tmp_path / "x.tns", shape=(50,)).to_numpy()
    y = ct.read(tmp_path / "y.tns", shape=(70,)).to_numpy()
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)


def test_a_sparse_result_with_a_schedule(tmp_path):
    ok("C(i,j) = A(i,k) * B(k,j)", "-f", "A:csr", "-f", "B:csr", "-f", "C:csr",
       "-s", "parallelize(i,cpu_thread,no_races)", "-d", "i:40", "-d", "k:30", "-d", "j:20",
       "--density", "0.2", "-o", "A:A.mtx", "-o", "B:B.mtx", "-o", "C:C.mtx",
       cwd=tmp_path)  # fmt: skip
    A, B, C = (scipy.io.mmread(tmp_path / f"{n}.mtx") for n in "ABC")
    assert A.nnz == round(0.2 * 40 * 30) and B.nnz == round(0.2 * 30 * 20)
    np.testing.assert_allclose(C.toarray(), (A @ B).toarray(), rtol=1e-12)


def test_operands_read_from_files_fix_the_extents(tmp_path):
    M = sp.random_array((60, 45), density=0.15, format="coo", random_state=1)
    scipy.io.mmwrite(tmp_path / "M.mtx", M)
    B = ct.random((5, 6, 7), density=0.3, format="coo", seed=2)
    ct.write(tmp_path / "B.tns", B)

    ok(SPMV, "-i", f"A:{tmp_path / 'M.mtx'}", "-o", "x:x.npz", "-o", "y:y.npz", cwd=tmp_path)
    x, y = ct.load(tmp_path / "x.npz").to_numpy(), ct.load(tmp_path / "y.npz").to_numpy()
    assert x.shape == (45,)
    np.testing.assert_allclose(y, M.toarray() @ x, rtol=1e-12)

    # A FROSTT tensor read as CSF; the vector generated at the extent of k it gives.
    ok("Y(i,j) = B(i,j,k) * c(k)", "-i", "B:B.tns", "-f", "B:csf", "-o", "c:c.npz",
       "-o", "Y:Y.npz", cwd=tmp_path)  # fmt: skip
    c, Y = ct.load(tmp_path / "c.npz").to_numpy(), ct.load(tmp_path / "Y.npz")
    np.testing.assert_allclose(Y.to_numpy(), np.einsum("ijk,k->ij", B.to_numpy(), c))


def test_a_scalar_result(tmp_path):
    out = ok("s = sum(i, x(i) * x(i))", "-d", "i:25", "-o", "x:x.npz", "-o", "s:s.npz",
             "--time", "1", cwd=tmp_path)  # fmt: skip
    assert "over 1 run, " in out and "s: shape (), format scalar, nnz 1" in out
    x, s = ct.load(tmp_path / "x.npz").to_numpy(), ct.load(tmp_path / "s.npz").to_numpy()
    assert s.shape == () and x.shape == (25,)
    np.testing.assert_allclose(s, x @ x)


def test_a_saved_tensor_keeps_its_exact_format(tmp_path):
    # A hashed level's bucket count is part of the format (and the kernel's signature), which
    # its letter spelling "dh" does not carry.
    fmt = ct.Format([ct.dense, ct.hashed(buckets=64)])
    ct.save(tmp_path / "A.npz", ct.random((20, 30), density=0.2, format=fmt, seed=1))
    ok(SPMV, "-i", "A:A.npz", "-o", "x:x.npz", "-o", "y:y.npz", cwd=tmp_path)
    A = ct.load(tmp_path / "A.npz").to_numpy()
    x, y = ct.load(tmp_path / "x.npz").to_numpy(), ct.load(tmp_path / "y.npz").to_numpy()
    np.testing.assert_allclose(y, A @ x)


def test_dtypes_and_the_c_engine(tmp_path):
    ok("y(i) = A(i,j) * x(j)", "-f", "A:csr", "-t", "A:float32", "-t", "x:float32",
       "-t", "y:float32", "--engine", "c", "-d", "i:30", "-d", "j:20", "-o", "A:A.npz",
       "-o", "x:x.npz", "-o", "y:y.npz", cwd=tmp_path)  # fmt: skip
    A, x, y = (ct.load(tmp_path / f"{n}.npz") for n in "Axy")
    assert A.dtype == x.dtype == y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(), A.to_numpy() @ x.to_numpy(), rtol=1e-5)


def test_time_reports_the_runs_and_the_operands():
    out = ok(SPMV, "-f", "A:csr", "-d", "i:300", "-d", "j:200", "--time", "3", "--threads", "1")
    lines = out.splitlines()
    assert lines[0].startswith("compile: ") and lines[0].endswith(")")
    assert lines[1].startswith("run:     median ") and "over 3 runs, 1 thread" in lines[1]
    median = float(lines[1].split()[2])
    assert median > 0
    assert lines[2:] == [
        "A: shape (300, 200), format ds, nnz 600",  # the default density, 0.01
        "x: shape (200,), format d, nnz 200",
        "y: shape (300,), format d, nnz 300",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-f", "B:csr"], "-f: the statement names no tensor 'B'"),
        (["-f", "A:xyz"], "FormatError: unknown format string 'xyz'"),
        (["-f", "A"], "-f expects NAME:VALUE, got 'A'"),
        (["-s", "split(i,i0)"], "ScheduleError"),
        (["-s", "bogus(i)"], "ScheduleError: bogus(i): unknown command"),
        (["-d", "k:4"], "-d: the statement has no index variable 'k'"),
        (["-d", "i:-4"], "-d i: the extent must be a positive integer"),
        (["--time"], "the extent of i, j (indexing A) is not known: give it with -d i:EXTENT"),
        (["--time", "0"], "--time needs at least 1 run"),
        (["-d", "i:5", "-d", "j:5", "--time", "1", "--threads", "0"], "--threads must be"),
        (["--density", "1.5"], "--density: 1.5 is not in [0, 1]"),
        (["--density", "A:lots"], "--density A: 'lots' is not a number"),
        (["-t", "A:float128x"], "-t A: 'float128x' is not a dtype"),
        (["-i", "A:/no/such/file.mtx"], "No such file or directory"),
        (["-i", "y:y.mtx"], "'y' is the result"),
        (["-p", "everything"], "invalid choice: 'everything'"),
        (["--engine", "gcc"], "invalid choice: 'gcc'"),
    ],
)
def test_bad_input_is_one_message_and_status_2(args, message, capsys):
    # In process, for speed (the subprocess tests below show no traceback escapes).
    with pytest.raises(SystemExit) as exit_:
        cli.main([SPMV, *args])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err
    assert err.rstrip().splitlines()[-1].startswith("coiter: error: ")


def test_bad_statements_and_files(tmp_path):
    done = coiter("y(i) = A(i,j) *")
    assert done.returncode == 2 and "ParseError: expected a tensor" in done.stderr
    assert done.stderr.startswith("coiter: error: ") and done.stdout == ""
    done = coiter(SPMV, "-f", "B:csr")  # argparse's usage, then the message
    assert done.returncode == 2 and done.stderr.startswith("usage: coiter ")
    assert "Traceback" not in done.stderr
    (tmp_path / "bad.mtx").write_text(
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 3\n"
    )
    done = coiter(SPMV, "-i", "A:bad.mtx", "--time", "1", cwd=tmp_path)
    assert done.returncode == 2 and "ParseError" in done.stderr and "Traceback" not in done.stderr
    B = ct.random((3, 4, 5), density=0.5, format="coo", seed=0)
    ct.write(tmp_path / "B.tns", B)
    done = coiter(SPMV, "-i", "A:B.tns", cwd=tmp_path)
    assert done.returncode == 2
    assert "holds a 3-mode tensor, but the statement indexes A with 2" in done.stderr


def test_a_file_disagreeing_with_a_given_extent(tmp_path):
    scipy.io.mmwrite(tmp_path / "M.mtx", sp.random_array((6, 4), density=0.5, format="coo"))
    done = coiter(SPMV, "-i", "A:M.mtx", "-d", "i:7", "--time", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert "index variable 'i' has extent 7 elsewhere, but M.mtx gives it 6" in done.stderr


def test_the_console_script_is_the_modules_main():
    with open(ROOT / "pyproject.toml", "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    module, _, function = scripts["coiter"].partition(":")
    assert (module, function) == ("coiter.cli", "main")
    assert cli.main(["y(i) = x(i)", "-p", "notation"]) == 0
    with pytest.raises(SystemExit) as exit_:
        cli.main(["y(i) = x(i)", "-f", "z:d"])
    assert exit_.value.code == 2


@pytest.mark.parametrize("page", ["docs/cli.md", "README.md"])
def test_the_commands_of_the_docs_run(page, tmp_path):
    """Every ``coiter`` line of the page's shell blocks, in a folder holding the files they
    name."""
    scipy.io.mmwrite(tmp_path / "matrix.mtx", sp.random_array((50, 40), density=0.2, format="coo"))
    text = (ROOT / page).read_text()
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)
    commands = [
        line for block in blocks for line in block.splitlines() if line.startswith("coiter ")
    ]
    assert len(commands) >= 3
    for command in commands:
        words = shlex.split(command, comments=True)
        assert ok(*words[1:], cwd=tmp_path) != ""
    assert ct.read(tmp_path / "y.tns").shape == (50,)
