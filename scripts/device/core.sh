#!/usr/bin/env bash
# Device call for [core]/[perf]: GPU tests, fidelity table, kernel microbenchmark.
# Usage (device machine, repo root): bash scripts/device/core.sh [bench-args...]
# Env: SKIP_TESTS=1, TEST_K="pytest -k expression" (a subset), SKIP_FIDELITY=1, SKIP_BENCH=1.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "editable install failed; using PYTHONPATH"
export PYTHONPATH=$PWD:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu_tests.log"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # -n 4: compiling ~35 kernel variants is CPU-bound; the GPU has room for four workers
  timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -m gpu tests/functional/test_kernel_gpu.py -q -p no:cacheprovider \
    -n 4 --tb=short -rfE ${TEST_K:+-k "$TEST_K"} >> "$OUT/gpu_tests.log" 2>&1
  grep -E "passed|failed|^FAILED|^E  " "$OUT/gpu_tests.log" | head -60
fi
if [ "${SKIP_FIDELITY:-0}" != 1 ]; then
  timeout 120 python3 -m forge_mcore.bench.fidelity --out "$OUT"
fi
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0
timeout "${BENCH_TIMEOUT:-420}" python3 -m forge_mcore.bench.kernel --out "$OUT" "$@" 2>&1 | tee "$OUT/kernel.log"
