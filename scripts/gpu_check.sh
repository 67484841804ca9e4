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
"$PY" -m pip install -v --no-build-isolation --no-deps . > "$OUT/build.txt" 2>&1 \
    || { tail -60 "$OUT/build.txt"; exit 1; }
echo "[gpu_check] build: $(( $(date +%s) - start )) s"
cd /tmp  # import the installed package, not the source tree
"$PY" -c "import coiter as ct; print(ct.cuda.status())"
# The default GPU schedule of SDDMM, whose CSR result keeps A's pattern (docs/compiler.md): here
# it splits A's nonzeros; on the H200 of 2026-11-27 it was a thread per row (docs/gpu.md).
"$PY" -c "import coiter as ct; print('[gpu_check] SDDMM:', ct.compile('C(i,j) = A(i,j) * M(i,k) * N(k,j)', formats={'A': 'csr', 'M': 'dd', 'N': 'dd', 'C': 'csr'}, target='cuda').concrete)" || true
set +e
# Each stage is bounded (a device machine's time is counted): a test that hangs fails alone.
TEST_LIMIT="${GPU_CHECK_TEST_SECONDS:-300}"
BENCH_LIMIT="${GPU_CHECK_BENCHMARK_SECONDS:-240}"
# (Every failure reported, not only the first: a GPU machine's time is scarce.)
PYTHONUNBUFFERED=1 timeout "$TEST_LIMIT" "$PY" -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu "$ROOT/tests/test_cuda_device.py" \
    "$ROOT/tests/test_docs_examples.py" \
    -o addopts="" -o timeout=120 2>&1 | tee "$OUT/pytest.txt"
tests=$?
PYTHONPATH="$ROOT" PYTHONUNBUFFERED=1 timeout "$BENCH_LIMIT" "$PY" -m benchmarks.gpu --out "$OUT/gpu_benchmark.json" "${@:2}" 2>&1 | tee "$OUT/benchmark.txt"
bench=$?
echo "[gpu_check] pytest exit $tests, benchmark exit $bench"
exit $(( tests || bench ))
