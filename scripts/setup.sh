#!/usr/bin/env bash
# Set up a machine to build, test and run coiter, from a fresh Debian 12 that has only
# Python 3.11+ and a C++ compiler. Idempotent: a second run installs nothing and only lets
# the (incremental, ccache-backed) C++ build check that it is up to date.
#
#   bash scripts/setup.sh
#
# Environment:
#   PYTHON=/path/to/python3.x   interpreter for the virtual environment (default: python3,
#                               else the newest python3.1x on PATH; must be >= 3.11)
#   COITER_SKIP_APT=1           never touch system packages
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
LOG="$ROOT/build/setup.log"
log() { echo "[setup] $*"; }
warn() { echo "[setup] WARNING: $*" >&2; }
die() { echo "[setup] ERROR: $*" >&2; exit 1; }

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_WARN_SCRIPT_LOCATION=1
export DEBIAN_FRONTEND=noninteractive

# --- Python -----------------------------------------------------------------------------
py_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
if [[ -n "${PYTHON:-}" ]]; then
    py_ok "$PYTHON" || die "PYTHON=$PYTHON is not a Python >= 3.11"
else
    PYTHON=""
    for cand in python3 python3.13 python3.12 python3.11; do
        if command -v "$cand" >/dev/null 2>&1 && py_ok "$cand"; then PYTHON="$(command -v "$cand")"; break; fi
    done
    [[ -n "$PYTHON" ]] || die "no Python >= 3.11 found (set PYTHON=/path/to/python3.11)"
fi
PYVER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"

# --- system packages ----------------------------------------------------------------------
# llvm-19-dev: the LLVM JIT engine (optional: without it the build falls back to the C engine).
# zlib1g-dev, libzstd-dev: required by LLVM's CMake package (LLVMSupport links them).
# ccache: picked up by CMakeLists.txt, makes rebuilds cheap.
want=(llvm-19-dev zlib1g-dev libzstd-dev ccache)
# Debian's own Python ships venv/ensurepip and the C headers as separate packages.
"$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 || want+=("python$PYVER-venv")
"$PYTHON" - <<'EOF' >/dev/null 2>&1 || want+=("python$PYVER-dev")
import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
EOF
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || want+=(g++)
command -v cc >/dev/null 2>&1 || want+=(gcc)   # the C engine compiles kernels with cc

missing=()
if [[ "${COITER_SKIP_APT:-0}" != 1 ]] && command -v dpkg-query >/dev/null 2>&1; then
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
fi
if ((${#missing[@]})); then
    SUDO=()
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else SUDO=(none); fi
    fi
    if [[ "${SUDO[*]}" == none ]] || ! command -v apt-get >/dev/null 2>&1; then
        warn "missing system packages: ${missing[*]}; cannot install them (not root, no sudo, or no apt-get)."
        if [[ " ${missing[*]} " == *" llvm-19-dev "* ]]; then
            warn "coiter will build without the LLVM JIT engine (unless another LLVM 17-19 is found) and use its C engine."
        fi
    else
        log "installing system packages: ${missing[*]} (log: build/setup-apt.log)"
        mkdir -p "$ROOT/build"
        if { "${SUDO[@]}" apt-get update -q && \
             "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
             >"$ROOT/build/setup-apt.log" 2>&1; then
            log "system packages installed"
        else
            tail -n 20 "$ROOT/build/setup-apt.log" >&2
            warn "apt-get failed for: ${missing[*]}; continuing (without LLVM the build falls back to the C engine)."
        fi
    fi
else
    log "system packages present"
fi

# --- virtual environment ------------------------------------------------------------------
if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    log "using .venv ($("$VENV/bin/python" -V 2>&1))"
else
    [[ -e "$VENV" ]] && { log "removing broken .venv"; rm -rf "$VENV"; }
    log "creating .venv with $PYTHON (Python $PYVER)"
    "$PYTHON" -m venv "$VENV" || die "python -m venv failed (on Debian: apt-get install python$PYVER-venv)"
    "$VENV/bin/python" -m pip install -q --upgrade pip
fi
PIP=("$VENV/bin/python" -m pip)

# --- build requirements ---------------------------------------------------------------------
reqs=("scikit-build-core>=0.10" "pybind11>=2.12" "ninja" "cmake>=3.20" "numpy>=1.24" "scipy>=1.11")
if "$VENV/bin/python" - "${reqs[@]}" <<'EOF' >/dev/null 2>&1; then
import sys
from importlib.metadata import version
from packaging.requirements import Requirement
for r in map(Requirement, sys.argv[1:]):
    assert r.specifier.contains(version(r.name), prereleases=True), r
EOF
    log "build requirements present"
else
    log "installing build requirements"
    "${PIP[@]}" install -q packaging "${reqs[@]}"
fi

# --- coiter itself (editable; incremental C++ build in build/{wheel_tag}) -------------------
if compgen -G "$ROOT/build/*/build.ninja" >/dev/null; then
    log "building and installing coiter (incremental; log: build/setup.log)"
else
    log "building and installing coiter (first build: a minute or more on 2 cores; log: build/setup.log)"
fi
mkdir -p "$ROOT/build"
start=$SECONDS
if ! "${PIP[@]}" install --no-build-isolation -v -e ".[test,docs]" >"$LOG" 2>&1; then
    echo "----- last 80 lines of build/setup.log -----" >&2
    tail -n 80 "$LOG" >&2
    die "pip install -e . failed (full log: build/setup.log)"
fi
engine="C engine"
grep -q "the LLVM JIT engine will be built" "$LOG" && engine="LLVM JIT engine"
grep -q "LLVM 17-19 not found" "$LOG" && engine="C engine: LLVM 17-19 not found"
if grep -q "ninja: no work to do" "$LOG"; then
    log "coiter up to date ($engine; $((SECONDS - start)) s)"
else
    log "coiter built ($engine) in $((SECONDS - start)) s"
fi
"$VENV/bin/python" -c 'import coiter' || die "import coiter failed after install"
log "done: activate with '. .venv/bin/activate'"
