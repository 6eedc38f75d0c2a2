#!/usr/bin/env bash
# Session 39, device call 2 (an H100, after call 1 = results/2026-12-05/session37/call3.sh wrote the H100's winners,
# copied into forge_mcore/kernels/winners.csv before this call):
# 1. the nn GPU tests (tests/functional/test_nn_gpu.py): session 38's fused-linear backward (a parameter frozen
#    after patch()) ran on the CPU only;
# 2. session 37's call4.sh: the acceptance grid on the H100's winners, the card's state after it, and the LM head
#    at BT 16384 probed per arm (clock_probe.py); the phase timeline only if time is left.
#   bash results/2026-12-05/session39/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
TIMEOUT=150 OUT=$OUT bash results/2026-12-05/session35/nn_gpu.sh
echo "-- nn done at $(( $(date +%s) - start )) s"
mkdir -p "$OUT/g" && GRID_TIMEOUT=300 OUT=$OUT/g bash results/2026-12-01/session15/call4.sh
echo "-- grid done at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv \
  > "$OUT/after_grid.txt"; cat "$OUT/after_grid.txt"
CELLS="151936x4096:16384:sgdm-bf16+adamw-bf16+mainloop:sgdm-bf16+cublas+sgdm-bf16@num_stages=5;151936x4096:16384:adamw-int8+mainloop:adamw-int8+adamw-bf16" \
  OUT=$OUT/probe timeout 120 python3 scripts/device/clock_probe.py > "$OUT/probe.log" 2>&1
echo "probe rc $? ($(( $(date +%s) - start )) s)"; tail -n 16 "$OUT/probe.log"
if [ $(( $(date +%s) - start )) -lt 470 ]; then
  timeout 90 python3 -m forge_mcore.bench.timeline --out "$OUT/timeline" --shapes 151936x4096 --bts 16384 \
    --arms sgdm-bf16,adamw-bf16 --reps 5 > "$OUT/timeline.log" 2>&1
  echo "timeline rc $? ($(( $(date +%s) - start )) s)"; tail -n 6 "$OUT/timeline.log"; rm -f "$OUT"/timeline/traces.pt
fi
(cd "$OUT" && tar czf /tmp/call2.tgz --ignore-failed-read probe probe.log timeline timeline.log after_grid.txt nn.log \
  && rm -rf probe timeline && mv /tmp/call2.tgz .)
