"""The portable wheel (docs/installation.md): scripts/build-wheel.sh's manylinux wheel, installed
in a fresh virtual environment, computes SpMV and SpGEMM as SciPy does with the system's LLVM
made unreachable, with and without a C compiler (tests/wheel_smoke.py runs inside), and passes
the kernel-call and version tests of this suite there.

The system libraries are hidden in a private mount namespace (`unshare -m`: root, or an
unprivileged user namespace), so nothing outside the test process changes. The wheel is
COITER_WHEEL, or the newest dist/coiter-*manylinux*.whl; without one the tests skip and say how
to build it (the build takes ~10 minutes on 2 cores, too long to start from a test).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SMOKE = Path(__file__).resolve().parent / "wheel_smoke.py"

# Runs "$@" in a mount namespace where every shared libLLVM the loader knows, every LLVM
# installation folder, and with HIDE_GOMP=1 the system's libgomp, are empty. Bind mounts of
# /dev/null over library files make them unloadable ("file too short") without touching them.
HIDE = r"""
set -eu
for dir in /usr/lib/llvm-* /usr/local/lib/llvm-*; do
  if [ -d "$dir" ]; then mount -t tmpfs -o ro,size=4k none "$dir"; fi
done
libs=$(ldconfig -p | awk '/libLLVM/ {print $NF}')
if [ "$HIDE_GOMP" = 1 ]; then libs="$libs $(ldconfig -p | awk '/libgomp/ {print $NF}')"; fi
for lib in $libs; do
  mount --bind /dev/null "$(readlink -f "$lib")"
done
exec env PATH="$SMOKE_PATH" "$@"
"""


def _wheel() -> Path:
    if os.environ.get("COITER_WHEEL"):
        return Path(os.environ["COITER_WHEEL"])
    wheels = sorted((ROOT / "dist").glob("coiter-*manylinux*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        pytest.skip("no wheel: build one with scripts/build-wheel.sh (or set COITER_WHEEL)")
    return wheels[-1]


def _namespace_command() -> list[str]:
    """`unshare` with a private mount namespace this user may create, or skip."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed: cannot hide the system's LLVM")
    for command in (["unshare", "-m", "--propagation", "private"], ["unshare", "-r", "-m"]):
        if subprocess.run([*command, "true"], capture_output=True).returncode == 0:
            return command
    pytest.skip("no mount namespace can be created here: cannot hide the system's LLVM")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and pytest installed (NumPy, SciPy and pytest
    from the package index)."""
    wheel = _wheel()
    directory = tmp_path_factory.mktemp("wheel-venv")
    subprocess.run([sys.executable, "-m", "venv", str(directory)], check=True)
    pip = [str(directory / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, str(wheel), "pytest"], check=True)
    return directory


def _run_hidden(venv: Path, tmp_path: Path, *args: str, compiler: bool, cwd: Path) -> str:
    """Runs the venv's Python with ``args`` where the system's LLVM (and, without ``compiler``,
    its libgomp and C compiler) cannot be found; its output, or a failure with it."""
    # PATH: the venv, and the system's folders only when the C compiler is to be found there.
    path = str(venv / "bin") + (":/usr/local/bin:/usr/bin:/bin" if compiler else "")
    env = {
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "COITER_CACHE_DIR": str(tmp_path / "kernels"),  # compile, never load a cached kernel
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",  # for the mounts, before SMOKE_PATH replaces it
        "SMOKE_PATH": path,
        "HIDE_GOMP": "0" if compiler else "1",
    }
    python = str(venv / "bin" / "python")
    command = [*_namespace_command(), "sh", "-c", HIDE, "hide", python, *args]
    # No PYTHONPATH in env: `import coiter` can only find the installed wheel (the checkout's
    # package is python/coiter, never on the path).
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_wheel_runs_with_llvm_hidden_and_a_c_compiler(venv: Path, tmp_path: Path) -> None:
    out = _run_hidden(venv, tmp_path, str(SMOKE), "--compiler", compiler=True, cwd=tmp_path)
    assert "llvm: SpMV and SpGEMM agree with SciPy" in out
    assert "c: SpMV and SpGEMM agree with SciPy" in out


def test_wheel_runs_with_llvm_libgomp_and_compiler_hidden(venv: Path, tmp_path: Path) -> None:
    out = _run_hidden(venv, tmp_path, str(SMOKE), "--no-compiler", compiler=False, cwd=tmp_path)
    assert "llvm: SpMV and SpGEMM agree with SciPy" in out
    assert "c: no compiler, CompileError" in out


def test_wheel_passes_kernel_and_version_tests_with_llvm_hidden(venv: Path, tmp_path: Path) -> None:
    # Kernel calls of both engines against NumPy/SciPy (75 tests, under a minute), and the
    # installed distribution's version against pyproject.toml's.
    tests = ["tests/test_kernel_calls.py", "tests/test_version.py"]
    pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    out = _run_hidden(venv, tmp_path, *pytest_args, compiler=True, cwd=ROOT)
    assert " passed" in out and "failed" not in out and "skipped" not in out, out
