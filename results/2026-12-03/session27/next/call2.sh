#!/usr/bin/env bash
# Prepared in session 27, not run: every ping-pong config (the two-half ring among them) swept on
# 12288 x 4096, 4096 x 12288 and the LM head at BT 1024, after a parallel compile per arm; tarred as
# sweep2.tgz. Locally afterwards:  python -m forge_mcore.bench.kernel --winners <dir>/sweep/kernel.csv
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs all --sweep-kernels gluon_ws"
SHAPE=12288x4096 SWEEP="$SWEEP" bash scripts/device/warm_sweep.sh
timeout 300 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 12288x4096,4096x12288,151936x4096 \
  --bts 1024 --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
cd $OUT && tar czf /tmp/sweep2.tgz sweep sweep.log && rm -rf sweep sweep.log && mv /tmp/sweep2.tgz $OUT/
