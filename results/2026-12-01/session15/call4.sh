#!/usr/bin/env bash
# Session 15, device call 4: the acceptance grid on main (committed winners): 5 shapes x 4 BTs,
# AdamW bf16/int8, SGD-momentum and Lion bf16, one process (the LM head last; rows written as
# they finish, so a time limit cuts only the last cells).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout ${GRID_TIMEOUT:-480} python3 -m forge_mcore.bench.kernel --out $OUT/grid \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 512,1024,4096,16384 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --reps 30 > $OUT/grid.log 2>&1
echo "grid rc $?"; tail -n 4 $OUT/grid.log
rm -f $OUT/grid/*.png
cd $OUT && tar czf /tmp/call4.tgz . && rm -rf $OUT/* && mv /tmp/call4.tgz $OUT/
