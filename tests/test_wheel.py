"""The portable wheel (docs/installation.md): scripts/build-wheel.sh's manylinux wheel, installed
in a fresh virtual environment, computes SpMV and SpGEMM as SciPy does with the system's LLVM
made unreachable, with and without a C compiler (tests/wheel_smoke.py runs inside), reads back
its disk cache there, and passes the kernel-call and version tests of this suite there. Its
binaries ask no glibc newer than its tag says and no libstdc++ at all.

The system libraries are hidden in a private mount namespace (`unshare -m`: root, or an
unprivileged user namespace), so nothing outside the test process changes. The wheel is
COITER_WHEEL, or the newest dist/coiter-*manylinux*.whl; without one the tests skip and say how
to build it (the build takes ~10 minutes on 2 cores, too long to start from a test).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
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


# Computes an SpMV with the LLVM engine, checks it against SciPy and prints the kernel cache's
# counters.
SPMV_AND_CACHE_COUNTERS = """
import json
import numpy as np
import scipy.sparse as sp
import coiter as ct
A = sp.random_array((300, 200), density=0.05, format="csr", random_state=1)
x = np.random.default_rng(7).random(200)
y = ct.evaluate("y(i) = A(i,j) * x(j)", engine="llvm", A=A, x=x)
np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12)
info = ct.cache_info()
print(json.dumps({"compiles": info["compiles"], "disk_hits": info["disk_hits"]}))
"""


def test_wheel_reads_back_its_disk_cache_with_llvm_hidden(venv: Path, tmp_path: Path) -> None:
    # The disk cache examines its folder (owner, mode) and each entry (kind, size) with lstat
    # and fstat, which the wheel's core defines itself (src/util/glibc_compat.cpp, over glibc's
    # __lxstat and __fxstat): a wrong field there disables the cache or rejects the entry. The
    # second process must load the first one's kernel (both use tmp_path/kernels).
    first, second = (
        json.loads(
            _run_hidden(venv, tmp_path, "-c", SPMV_AND_CACHE_COUNTERS, compiler=False, cwd=tmp_path)
        )
        for _ in range(2)
    )
    assert first["compiles"] >= 1 and first["disk_hits"] == 0, first
    assert second["compiles"] == 0 and second["disk_hits"] >= 1, second


def test_wheel_asks_no_glibc_newer_than_its_tag_and_no_libstdcxx() -> None:
    """What a loader checks before anything runs, read from the wheel's files: every glibc
    version its binaries need is at most the oldest glibc its tag names, which is at most 2.27
    (docs/installation.md), and none needs libstdc++ (linked in). The glibc functions the core
    defines itself (src/util/glibc_compat.cpp) are not asked of glibc at all. Those cannot all
    be called from Python: LLVM draws on arc4random only for temporary file names and on
    mallinfo2 only for pass timing reports, neither of which coiter asks of it; the disk cache
    test above calls lstat and fstat."""
    elf_versions = pytest.importorskip("elf_versions", reason="needs pyelftools (the wheel extra)")
    wheel = _wheel()
    tags = [
        (int(major), int(minor))
        for major, minor in re.findall(r"manylinux_(\d+)_(\d+)_", wheel.name)
    ]
    assert tags and min(tags) <= (2, 27), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        binaries = {
            name: archive.read(name) for name in archive.namelist() if ".so" in Path(name).name
        }
    assert any(Path(name).name.startswith("_core") for name in binaries), sorted(binaries)
    for name, elf in binaries.items():
        for library, version in elf_versions.needed_versions(elf):
            glibc = elf_versions.glibc_version(version)
            assert glibc is None or glibc[:2] <= min(tags), (name, library, version)
            assert not version.startswith(("GLIBCXX_", "CXXABI_")), (name, library, version)
        assert "libstdc++.so.6" not in elf_versions.needed_libraries(elf), name
    core = next(elf for name, elf in binaries.items() if Path(name).name.startswith("_core"))
    required = elf_versions.required_versions(core)
    defined_in_core = {
        "arc4random",
        "stat",
        "fstat",
        "lstat",
        "fstat64",
        "mallinfo2",
        "__libc_single_threaded",
    }
    assert not defined_in_core & set(required), defined_in_core & set(required)
    for function in ("exp", "log", "log2", "pow"):
        assert required[function] == ("libm.so.6", "GLIBC_2.2.5"), (function, required[function])
    # A function glibc 2.34 moved into libc, asked for at its old version (retarget_glibc.py),
    # and found on an older glibc in libpthread, which the core therefore needs.
    assert required["pthread_create"] == ("libc.so.6", "GLIBC_2.2.5"), required["pthread_create"]
    assert "libpthread.so.0" in elf_versions.needed_libraries(core)
