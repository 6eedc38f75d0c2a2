#!/usr/bin/env bash
# Session 44, device call 7 (prepared, not run): where the 1024 x 4096 step's warps stall, against its main
# loop alone. Call 6 found no unit above 46-57% of its peak in the step: it is bound by latency and order.
# Nsight's per-SASS warp-stall samples of the step and of the main-loop-only kernel, SGD-m BT 512, summed per
# loop by scripts/sass_stalls.py (a main loop's wgmma waits against its slab-barrier waits and turn waits).
#   bash results/2026-12-06/session44/call7.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
CELLS=1024x4096:512:sgdm-bf16 GLUON_FLAGS=1 ARMS="step mainloop" SOURCE=1 NCU_TIMEOUT=150 OUT=$OUT \
  bash scripts/device/ncu_kernel.sh
