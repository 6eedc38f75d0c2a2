#!/usr/bin/env bash
# Session 26, call 5: the acceptance grid's BT <= 1024 cells on the winners rewritten from call 4's sweep
# (the winning candidates moved into CONFIGS); BT >= 4096 winners are unchanged.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout ${GRID_TIMEOUT:-200} python3 -m forge_mcore.bench.kernel --out $OUT/grid \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 512,1024 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --reps 30 > $OUT/grid.log 2>&1
echo "grid rc $?"; tail -n 3 $OUT/grid.log; rm -f $OUT/grid/*.png
python3 -m forge_mcore.bench.kernel --acceptance $OUT/grid/kernel.csv 2>&1 | tail -n 30
