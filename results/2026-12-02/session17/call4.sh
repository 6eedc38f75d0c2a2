#!/usr/bin/env bash
# Session 17 call 4: the kernel bench now interleaves its arms (and a sweep's configs) rep by rep
# (bench.common.time_graphs). Sweeps where the grid's BT >= 4096 cells missed, applied on the device
# (--winners) before the grid runs on them:
#  A. AdamW bf16 1024x4096 at BT 4096/16384 (its winners were still the Triton kernel's);
#  B. BT 16384, the 4096-class shapes: tall vs cooperative for every arm (int8: cooperative only).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 120 python3 -m forge_mcore.bench.kernel --out $OUT/swA --shapes 1024x4096 --bts 4096,16384 \
  --arms adamw-bf16 --sweep --sweep-configs all --reps 30 > $OUT/swA.log 2>&1
echo "sweep A rc $?"; tail -n 3 $OUT/swA.log
timeout 200 python3 -m forge_mcore.bench.kernel --out $OUT/swB --shapes 4096x4096,12288x4096,4096x12288 --bts 16384 \
  --arms adamw-bf16,lion-bf16,sgdm-bf16,adamw-int8 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_coop \
  --reps 30 > $OUT/swB.log 2>&1
echo "sweep B rc $?"; tail -n 13 $OUT/swB.log
for d in swA swB; do python3 -m forge_mcore.bench.kernel --winners $OUT/$d/kernel.csv 2>&1 | tail -n 1; done
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
rm -f $OUT/sw*/kernel_bench.png
GRID_TIMEOUT=320 bash results/2026-12-01/session15/call4.sh
