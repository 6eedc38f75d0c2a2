#!/usr/bin/env bash
# Session 22, call 2: per-call fixed cost at 1024 x 4096 (scripts/device/fixed_cost.py: step, main
# loop and cuBLAS wgrad over BT 64..1024 on the BT-1024 winner, fitted intercept + slope x BT), AdamW
# bf16 and SGD-m, then the acceptance grid on main (session 15's call4.sh, GRID_TIMEOUT 300).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
for arm in adamw-bf16 sgdm-bf16; do
  mkdir -p $OUT/fixed_$arm
  ARM=$arm BASE_BT=1024 OUT=$OUT/fixed_$arm timeout 100 python3 scripts/device/fixed_cost.py 2>&1 | tail -n 6
done
mkdir -p $OUT/grid_call && OUT=$OUT/grid_call GRID_TIMEOUT=300 bash results/2026-12-01/session15/call4.sh
