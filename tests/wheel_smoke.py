"""Smoke test of an installed coiter wheel, run by tests/test_wheel.py in a fresh virtual
environment where the system's LLVM (and, with --no-compiler, the C compiler and the system's
libgomp) cannot be reached. Not collected by pytest: it must import the installed wheel, never
the checkout.

usage: python wheel_smoke.py --compiler   # cc on PATH: both engines compute
       python wheel_smoke.py --no-compiler  # no cc: LLVM computes, the C engine raises clearly
"""

import argparse
import ctypes
import os
import sys
import sysconfig
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct
from coiter import _core
from coiter.errors import CompileError


def mapped_libraries() -> set[str]:
    """The files mapped into this process (the libraries the dynamic loader found)."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    return {line.split(maxsplit=5)[5] for line in maps if len(line.split(maxsplit=5)) == 6}


def assert_unloadable(library: str) -> None:
    """That the system's `library` is hidden from this process, as the test means it to be."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return
    raise AssertionError(f"{library} can still be loaded: the system's copy is not hidden")


def check_spmv_and_spgemm(engine: str) -> None:
    rng = np.random.default_rng(7)
    A = sp.random_array((300, 200), density=0.05, format="csr", random_state=1)
    B = sp.random_array((200, 250), density=0.05, format="csr", random_state=2)
    x = rng.random(200)
    y = ct.evaluate("y(i) = A(i,j) * x(j)", engine=engine, A=A, x=x)
    np.testing.assert_allclose(y.to_numpy(), A @ x, rtol=1e-12)
    C = ct.evaluate("C(i,j) = A(i,k) * B(k,j)", out_format="csr", engine=engine, A=A, B=B)
    expected = (A @ B).toarray()
    np.testing.assert_allclose(C.to_scipy().toarray(), expected, rtol=1e-12)
    assert C.nnz == np.count_nonzero(expected), (C.nnz, np.count_nonzero(expected))
    print(f"{engine}: SpMV and SpGEMM agree with SciPy")


def main() -> None:
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--compiler", dest="compiler", action="store_true")
    group.add_argument("--no-compiler", dest="compiler", action="store_false")
    compiler = parser.parse_args().compiler
    assert_unloadable("libLLVM.so.19.1")
    if not compiler:
        assert_unloadable("libgomp.so.1")

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    package = Path(ct.__file__).resolve().parent
    assert package.parent == site, f"coiter imported from {package}, not the venv's {site}"
    assert _core.with_llvm, "the wheel was built without its LLVM engine"
    print(f"coiter {ct.__version__} from {package}")

    check_spmv_and_spgemm("llvm")
    if compiler:
        check_spmv_and_spgemm("c")
    else:
        try:
            ct.evaluate("y(i) = A(i,j) * x(j)", engine="c", A=sp.eye(3, format="csr"), x=np.ones(3))
        except CompileError as error:
            assert "C compiler" in str(error), error
            print(f"c: no compiler, CompileError as documented: {str(error).splitlines()[0]}")
        else:
            raise AssertionError("the C engine compiled a kernel without a C compiler")

    # LLVM and the OpenMP runtime came from the wheel, not from the system.
    libraries = mapped_libraries()
    llvm = [lib for lib in libraries if "libLLVM" in lib]
    assert not llvm, f"a shared libLLVM was loaded: {llvm}"
    gomp = [lib for lib in libraries if "libgomp" in lib]
    assert gomp, "no OpenMP runtime loaded"
    if not compiler:
        # Only the wheel's own copy: the C engine's kernels (which link the system's) never ran.
        outside = [lib for lib in gomp if not Path(lib).resolve().is_relative_to(site)]
        assert not outside, f"libgomp loaded from outside the wheel: {outside}"
    print("loaded:", *sorted(lib for lib in libraries if "libgomp" in lib or "coiter" in lib))
    print("PATH:", os.environ.get("PATH"), "python:", sys.executable)


if __name__ == "__main__":
    main()
