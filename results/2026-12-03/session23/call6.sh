#!/usr/bin/env bash
# Session 23 call 6 (the commit adding the cp.async ping-pong config to CONFIGS): a sweep of the ping-pong
# configs on 1024 x 4096 at BT 512 (the cells where call 4 measured it faster), the winners rewritten from
# it (python -m forge_mcore.bench.kernel --winners), then the acceptance grid on them.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 200 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 1024x4096 --bts 512 \
  --arms adamw-bf16,sgdm-bf16,lion-bf16,adamw-int8 --sweep --sweep-kernels gluon_ws > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
python3 -m forge_mcore.bench.kernel --winners $OUT/sweep/kernel.csv; cp forge_mcore/kernels/winners.csv $OUT/
git diff --stat forge_mcore/kernels/winners.csv
GRID_TIMEOUT=280 bash results/2026-12-01/session15/call4.sh
