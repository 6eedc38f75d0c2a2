#!/usr/bin/env bash
# Session 40, device call 2 (an H200, call 1's winners.csv copied into forge_mcore/kernels/winners.csv first):
# 1. the acceptance grid on HEAD (the H200's first since session 35; sessions 37-39 changed the winners lookup
#    and added the H100's rows, which an H200 must not take), then --acceptance on it;
# 2. the nn GPU tests (session 38's frozen-parameter backward ran on an H100 only), then the kernel GPU tests that step
#    on the committed winners (AdamW parity at the real shapes, every rule, graph replay and capture).
#   bash results/2026-12-05/session40/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
mkdir -p "$OUT/g" && GRID_TIMEOUT=320 OUT=$OUT/g bash results/2026-12-01/session15/call4.sh
echo "-- grid done at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv \
  > "$OUT/after_grid.txt"; cat "$OUT/after_grid.txt"
(cd "$OUT/g" && tar xzf call4.tgz --wildcards "*grid/kernel.csv" "*grid/ceilings.json")
python3 -m forge_mcore.bench.kernel --acceptance "$OUT/g/grid/kernel.csv" > "$OUT/acceptance.txt" 2>&1
head -n 12 "$OUT/acceptance.txt"
TIMEOUT=150 OUT=$OUT bash results/2026-12-05/session35/nn_gpu.sh
echo "-- nn done at $(( $(date +%s) - start )) s"
timeout 170 python3 -m pytest -q -n 4 -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "real_shapes or every_rule_on_gpu or replayed or back_to_back or captures" -rf --tb=short > "$OUT/kernel_gpu.log" 2>&1
echo "kernel tests rc $? ($(( $(date +%s) - start )) s)"; tail -n 1 "$OUT/kernel_gpu.log"; grep FAILED "$OUT/kernel_gpu.log" | head
