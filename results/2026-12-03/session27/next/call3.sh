#!/usr/bin/env bash
# Prepared in session 27, not run: the L2-prefetching tile rings (configs.CANDIDATES: each next
# unit's weight and state lines asked into L2 a turn before its fills, `gluon_wgrad._prefetch_unit_l2`)
# swept beside the committed winners on 1024 x 4096 and 4096² at BT 512/1024, after their GPU tests
# (call1.sh's `-k ring` runs them: their ids end in -ring2/-ring3 with p1). Tarred as sweep3.tgz.
# If one wins: move it into CONFIGS, then `--winners <dir>/sweep/kernel.csv` locally.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs candidates --sweep-kernels gluon_ws"
SHAPE=1024x4096 SWEEP="$SWEEP" bash scripts/device/warm_sweep.sh
timeout 200 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 1024x4096,4096x4096 --bts 512,1024 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
cd $OUT && tar czf /tmp/sweep3.tgz sweep sweep.log && rm -rf sweep sweep.log && mv /tmp/sweep3.tgz $OUT/
