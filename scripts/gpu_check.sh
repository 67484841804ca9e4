#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, as one script for a machine that has one (CI has none):
# build coiter for the machine's Python, run the GPU tests (-m gpu) and the GPU benchmarks.
#
#   bash scripts/gpu_check.sh [OUTDIR [BENCHMARK OPTIONS]]
#
# Uses the machine's python3 with its NumPy, SciPy, CuPy and pytest; builds without LLVM when
# the machine has none (CPU kernels then use the C engine; GPU kernels do not need LLVM).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/build/gpu-check}"
mkdir -p "$OUT"
cd "$ROOT"
PY="${PYTHON:-python3}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt" || true
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
start=$(date +%s)
"$PY" -m pip install -q --no-build-isolation --no-deps . 2>&1 | tail -5
echo "[gpu_check] build: $(( $(date +%s) - start )) s"
cd /tmp  # import the installed package, not the source tree
"$PY" -c "import coiter as ct; print(ct.cuda.status())"
set +e
# (Every failure reported, not only the first: a GPU machine's time is scarce.)
PYTHONUNBUFFERED=1 "$PY" -m pytest -q -rfE -p no:cacheprovider -m gpu "$ROOT/tests/test_cuda_device.py" \
    "$ROOT/tests/test_docs_examples.py" \
    -o addopts="" 2>&1 | tee "$OUT/pytest.txt"
tests=$?
PYTHONPATH="$ROOT" PYTHONUNBUFFERED=1 "$PY" -m benchmarks.gpu --out "$OUT/gpu_benchmark.json" "${@:2}" 2>&1 | tee "$OUT/benchmark.txt"
bench=$?
echo "[gpu_check] pytest exit $tests, benchmark exit $bench"
exit $(( tests || bench ))
