#!/usr/bin/env bash
# Prepared in session 26, not run: the tile-ring configs swept beside the committed winners on the
# BT <= 1024 cells session 26 did not reach (12288 x 4096, 4096 x 12288, the LM head), after a
# parallel compile of the ring configs per arm; the sweep's rows are printed in sweep.log (its
# sweep.csv may not come back: copy it into a tar with kernel.csv). Locally afterwards:
#   python -m forge_mcore.bench.kernel --winners <call>/sweep/kernel.csv
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs all --sweep-kernels gluon_ws"
SHAPE=12288x4096 SWEEP="$SWEEP" bash scripts/device/warm_sweep.sh
timeout 330 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 12288x4096,4096x12288,151936x4096 \
  --bts 512,1024 --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
cd $OUT && tar czf /tmp/sweep.tgz sweep sweep.log && rm -rf sweep sweep.log && mv /tmp/sweep.tgz $OUT/
