"""The notebooks of notebooks/ run from top to bottom without an error (docs/jupyter.md).

Each notebook checks its own results against NumPy, SciPy or NetworkX with ``assert``; a failed
check, like any exception, fails its test here with the cell and the traceback. They run in a
temporary folder, on a fresh kernel of this Python (so with this checkout's coiter), and are
committed without outputs (``test_notebooks_are_committed_without_outputs``)."""

import json
import os
import pathlib
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# The longest any one cell may run (the slowest takes a few seconds on 2 busy cores).
CELL_TIMEOUT_S = 300


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 9


def _missing(path):
    """What a notebook needs and this machine lacks, beyond the test extras, or None. 09_gpu
    compiles CUDA C with NVRTC (the CUDA toolkit, or the nvidia-* wheels of coiter[gpu]); it
    runs its kernels only where a GPU is, and shows the error a call gives elsewhere."""
    if path.stem == "09_gpu":
        import coiter as ct

        status = ct.cuda.status()
        if status["nvrtc"] is None:
            return f"NVRTC is not installed: {status['nvrtc_problem']}"
    return None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    if why := _missing(path):
        pytest.skip(why)
    notebook = nbformat.read(path, as_version=4)
    # The kernel is this interpreter, and it imports coiter from where this test does: a
    # "python3" kernel spec of its own, found first on JUPYTER_PATH, wins over any other
    # installed on the machine.
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (coiter tests)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    work = tmp_path / "work"
    work.mkdir()
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_are_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
