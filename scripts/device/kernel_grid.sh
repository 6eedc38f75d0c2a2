#!/usr/bin/env bash
# Device call for [core]/[perf] on the two-GPU machine (kind nvidia-h200-x2), one command:
#   GPU 1: every GPU test (pytest -m gpu) and the App. E fidelity table;
#   GPU 0: a tile-config sweep on four cells, then the full benchmark grid
#          (5 shapes x BT 512..16384 x AdamW bf16/int8, SGD-momentum, Lion), tuned.
# Nothing else shares GPU 0 while it is timed. Writes under $OUT (6 files):
#   gpu_tests.log fidelity.csv sweep.csv kernel.csv ceilings.json kernel.log
# Tables and the plot are regenerated here with
#   python -m forge_mcore.bench.kernel --report results/DATE/kernel.csv --out docs/kernel
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
T0=$SECONDS
(
  export CUDA_VISIBLE_DEVICES=1
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu_tests.log"
  # -n 4 --dist loadgroup: the LM-head cases share one worker (side by side they ran out of memory)
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout "${TEST_TIMEOUT:-330}" python3 -m pytest -m gpu tests/functional -q \
    -p no:cacheprovider -n 4 --dist loadgroup --tb=short -rfE \
    >> "$OUT/gpu_tests.log" 2>&1
  timeout 120 python3 -m forge_mcore.bench.fidelity --out "$OUT" >> "$OUT/gpu_tests.log" 2>&1
) &
tests=$!
export CUDA_VISIBLE_DEVICES=0
timeout "${SWEEP_TIMEOUT:-150}" python3 -m forge_mcore.bench.kernel --out /tmp/sweep --sweep --reps 20 \
  --shapes 4096x4096,12288x4096 --bts 512,4096 --arms adamw-bf16,adamw-int8 > "$OUT/kernel.log" 2>&1
cp /tmp/sweep/sweep.csv "$OUT/" 2>/dev/null
timeout "${GRID_TIMEOUT:-$((560 - (SECONDS - T0)))}" python3 -m forge_mcore.bench.kernel --out /tmp/grid ${GRID_ARGS:-} \
  >> "$OUT/kernel.log" 2>&1
cp /tmp/grid/kernel.csv /tmp/grid/ceilings.json "$OUT/" 2>/dev/null
wait $tests
grep -E "passed|failed|^FAILED|^E  " "$OUT/gpu_tests.log" | head -40
grep -E "^ +[0-9]+x[0-9]+ BT=" "$OUT/kernel.log"
echo "[kernel_grid.sh] $((SECONDS - T0)) s"
