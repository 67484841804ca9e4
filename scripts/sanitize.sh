#!/usr/bin/env bash
# Build the C++ core (the coiter._core extension) with AddressSanitizer and
# UndefinedBehaviorSanitizer, and run the pytest suite against it:
#
#   bash scripts/test.sh --sanitize [pytest arguments]     (sets up first, then runs this)
#   bash scripts/sanitize.sh [pytest arguments]            (needs the system packages only)
#
# The sanitized build lives apart from the normal one: virtual environment .venv-sanitize,
# CMake build directory build/sanitize (incremental; ccache helps only rebuilds of this
# build, the flags differ from the normal one's). .venv is not touched.
#
# What is checked: every line of coiter's C++ (compiler, runtime, bindings) for heap, stack
# and global buffer overflows, use after free, and undefined behaviour (overflow of signed
# integers, bad shifts, misaligned or null accesses, invalid downcasts, ...). A report aborts
# the process, so it fails the run (in a child process, the test that started it).
#
# Kernels are not instrumented: the LLVM engine JIT-compiles them in process, and the C
# engine's `cc -O3` would take minutes per kernel with -fsanitize=address under load (the
# suite compiles hundreds). Their memory accesses stay covered by the kernels' own coordinate
# guards (src/ir/guard_coordinates.cpp) and by tests/test_memory_safety.py, which corrupts
# operands for both engines. COITER_SANITIZE_CC="cc -fsanitize=address,undefined" instruments
# the C engine's kernels too (COITER_CC for this run), for a targeted run (-k ...).
#
# Environment: COITER_SANITIZE_CC (see above), SANITIZE_JOBS (build jobs, default 2).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv-sanitize"
BUILD_DIR="build/sanitize"
LOG="$ROOT/build/sanitize-setup.log"
log() { echo "[sanitize] $*"; }
die() { echo "[sanitize] ERROR: $*" >&2; exit 1; }
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_WARN_SCRIPT_LOCATION=1
start=$SECONDS

# --- virtual environment: the interpreter of .venv when there is one --------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
    base="${PYTHON:-}"
    [[ -z "$base" && -x "$ROOT/.venv/bin/python" ]] && base="$ROOT/.venv/bin/python"
    [[ -z "$base" ]] && base="$(command -v python3)"
    log "creating .venv-sanitize with $base"
    "$base" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
fi
reqs=("scikit-build-core>=0.10" "pybind11>=2.12" "ninja" "cmake>=3.20" "numpy>=1.24" "scipy>=1.11")
"$VENV/bin/python" -c 'import scikit_build_core, pybind11, numpy, scipy, ninja, cmake' 2>/dev/null ||
    "$VENV/bin/python" -m pip install -q packaging "${reqs[@]}"

# --- the sanitized build (editable: Python sources come from python/coiter) -------------------
CXX_BIN="${CXX:-c++}"
command -v "$CXX_BIN" >/dev/null || CXX_BIN=g++
mkdir -p "$ROOT/build"
log "building coiter with -fsanitize=address,undefined in $BUILD_DIR (log: build/sanitize-setup.log)"
if ! CMAKE_BUILD_PARALLEL_LEVEL="${SANITIZE_JOBS:-2}" "$VENV/bin/python" -m pip install \
        --no-build-isolation -v -e ".[test]" \
        -Cbuild-dir="$BUILD_DIR" -Ccmake.define.COITER_SANITIZE=ON >"$LOG" 2>&1; then
    tail -n 60 "$LOG" >&2
    die "the sanitized build failed (full log: build/sanitize-setup.log)"
fi
log "built in $((SECONDS - start)) s"

# --- the sanitizer runtimes ---------------------------------------------------------------------
# Python itself is not instrumented, so the ASan runtime must be loaded before anything else:
# LD_PRELOAD. libstdc++ is preloaded with it so that ASan's interceptor of __cxa_throw finds
# the real one (otherwise the first C++ exception aborts with "CHECK failed ... __cxa_throw").
# libubsan is a dependency of _core and loads with it.
libasan="$("$CXX_BIN" -print-file-name=libasan.so)"
libstdcxx="$("$CXX_BIN" -print-file-name=libstdc++.so)"
[[ -e "$libasan" ]] || die "no libasan.so for $CXX_BIN (on Debian: the gcc package ships it)"
export LD_PRELOAD="$(readlink -f "$libasan") $(readlink -f "$libstdcxx")"
# detect_leaks=0: CPython and NumPy never free their interned objects and arenas at exit;
#   LeakSanitizer would report thousands of such "leaks", none of them coiter's.
# abort_on_error=1 / halt_on_error: a report kills the process (and fails the test).
# allocator_may_return_null=1: tests ask for absurd allocations on purpose and expect
#   MemoryError / a typed error, as without ASan, instead of an ASan "allocation-size-too-big".
# detect_stack_use_after_return=0: fake stacks would multiply the memory of OpenMP threads.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1:detect_stack_use_after_return=0:strict_init_order=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [[ -n "${COITER_SANITIZE_CC:-}" ]]; then export COITER_CC="$COITER_SANITIZE_CC"; fi

"$VENV/bin/python" -c 'import coiter, coiter._core' || die "import coiter failed under ASan"
log "LD_PRELOAD=$LD_PRELOAD"
log "COITER_CC=${COITER_CC:-cc}"
log "python -m pytest -q -p no:cacheprovider $*"
tests_start=$SECONDS
status=0
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@" || status=$?
log "pytest exited with $status after $((SECONDS - tests_start)) s (total $((SECONDS - start)) s)"
exit $status
