#!/usr/bin/env bash
# Set up (idempotent, see scripts/setup.sh), then run the test suite: the Python checks (ruff's
# lint and format check, mypy, stubtest of the core's stub; docs/testing.md), the documentation
# site's build with warnings as errors, pytest, then the C++ unit tests of the engines (tests/cpp,
# built with CMake in build/cpp-tests; COITER_SKIP_CPP_TESTS=1 skips them). Any finding fails the run. Extra arguments go to pytest:
#   bash scripts/test.sh -m slow   |   bash scripts/test.sh -k formats -x
# With --sanitize first, the suite runs instead against a build of the C++ core with
# AddressSanitizer + UBSan (.venv-sanitize, build/sanitize; see scripts/sanitize.sh):
#   bash scripts/test.sh --sanitize [pytest arguments]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  exec bash "$ROOT/scripts/sanitize.sh" "$@"
fi
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
export PATH="$ROOT/.venv/bin:$PATH"   # the cmake, ctest and ninja that setup.sh installed
echo "[test] ruff check, ruff format --check, mypy, stubtest of python/coiter/_core.pyi"
"$PY" -m ruff check "$ROOT"
"$PY" -m ruff format --check "$ROOT"
"$PY" -m mypy   # the files and options are pyproject.toml's [tool.mypy]
MYPYPATH="$ROOT/python" "$PY" -m mypy.stubtest coiter._core \
    --allowlist "$ROOT/scripts/stubtest_allowlist.txt"
echo "[test] clang-format --dry-run of src/ and tests/cpp/"
find "$ROOT/src" "$ROOT/tests/cpp" -name '*.[ch]pp' -print0 |
  xargs -0 "$ROOT/.venv/bin/clang-format" --dry-run --Werror
echo "[test] the documentation site: sphinx-build -W (docs/testing.md)"
"$PY" -m sphinx -W --keep-going -q -b html "$ROOT/docs" "$ROOT/build/docs"
echo "[test] python -m pytest -q $*"
"$PY" -m pytest -q "$@"
if [[ "${COITER_SKIP_CPP_TESTS:-0}" != "1" ]]; then
  echo "[test] C++ engine tests (tests/cpp)"
  mkdir -p "$ROOT/build"
  LOG="$ROOT/build/cpp-tests.log"
  { cmake -S "$ROOT" -B "$ROOT/build/cpp-tests" -G Ninja -DCOITER_CPP_TESTS=ON -DCMAKE_BUILD_TYPE=Release \
          -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$PY" &&
    cmake --build "$ROOT/build/cpp-tests" --parallel 2; } > "$LOG" 2>&1 ||
    { tail -n 60 "$LOG"; echo "[test] building the C++ tests failed; the full log is $LOG"; exit 1; }
  ctest --test-dir "$ROOT/build/cpp-tests" --output-on-failure
fi
