#!/usr/bin/env bash
# Session 19 call 7 (cold, the last ~250 s of device time): the BT >= 4096 half of the acceptance grid
# a third time on cf601e2's winners (5 shapes x BT 4096/16384 x 4 arms, one process, as
# session 15's call4.sh runs the whole grid).
# Run as: mkdir -p $OUT && OUT=$OUT timeout 150 bash results/2026-12-02/session19/call7.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 140 python3 -m forge_mcore.bench.kernel --out $OUT/grid \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 4096,16384 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --reps 30 > $OUT/grid.log 2>&1
echo "grid rc $?"; tail -n 4 $OUT/grid.log
rm -f $OUT/grid/*.png
