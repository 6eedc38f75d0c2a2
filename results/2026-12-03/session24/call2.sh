#!/usr/bin/env bash
# Session 24 call 2 (the tall int8 loop, committed): a sweep of every Gluon config for AdamW with int8 states at
# BT 512, 1024 and 4096 (the LM head at 512/1024), the winners rewritten from it
# (python -m forge_mcore.bench.kernel --winners), then the acceptance grid on them.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
K=gluon_ws,gluon_coop,gluon_tall,gluon_coop_tall
timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sweep1 --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 \
  --bts 512,1024 --arms adamw-int8 --sweep --sweep-kernels $K > $OUT/sweep1.log 2>&1; echo "sweep1 rc $?"
timeout 100 python3 -m forge_mcore.bench.kernel --out $OUT/sweep2 --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 4096 --arms adamw-int8 --sweep --sweep-kernels $K > $OUT/sweep2.log 2>&1; echo "sweep2 rc $?"
rm -f $OUT/sweep*/*.png
python3 -m forge_mcore.bench.kernel --winners $OUT/sweep1/kernel.csv,$OUT/sweep2/kernel.csv; cp forge_mcore/kernels/winners.csv $OUT/
git diff --stat forge_mcore/kernels/winners.csv 2>/dev/null
GRID_TIMEOUT=260 bash results/2026-12-01/session15/call4.sh
