#!/usr/bin/env bash
# Session 45, device call 2: call 1 (session 44's call7.sh) again with dense warp sampling, and each unit's
# main loop in the step against alone (ml_trace.py). Call 1's profile held 1,663 samples for a 17.8 us step
# (~3 per SM sub-partition, at nearly the same cycles on every SM), so whole phases went unsampled (consumer
# 0's rule: none). --warp-sampling-interval 0 samples every 32 cycles.
#   bash results/2026-12-06/session45/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
python3 results/2026-12-06/session45/ml_trace.py 2>&1 | tee "$OUT/ml_trace.log"
CELLS="1024x4096:512:sgdm-bf16 1024x4096:1024:sgdm-bf16 1024x4096:512:adamw-bf16" GLUON_FLAGS=1 \
  ARMS="step mainloop" SOURCE=1 SAMPLING=0 NCU_TIMEOUT=150 OUT=$OUT bash scripts/device/ncu_kernel.sh
