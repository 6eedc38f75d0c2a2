#!/usr/bin/env bash
# Session 26, call 4: the candidates (kernels/configs.py CANDIDATES: six-deep ping-pong rings beside
# 4 B-per-element tiles, and the tile ring of three column-half buffers with a six/seven-deep ring).
# (1) their GPU tests (the ring configs' tests, every rule and codec on the seven-deep one; parity and
# poisoned tiles for the plain six-deep ones: the committed code with a deeper ring), while (2) four processes compile every
# candidate for each arm (a one-rep sweep, thrown away); then (3) the sweep of the candidates beside
# the committed winners on 1024 x 4096 and 4096² at BT 512 and 1024, one process. (The winners come from its CSV locally,
# once the winning candidates are in CONFIGS: ``--winners`` takes current configs only.)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs candidates --sweep-kernels gluon_ws"
for arm in adamw-bf16 adamw-int8 sgdm-bf16 lion-bf16; do
  timeout 130 python3 -m forge_mcore.bench.kernel --out /tmp/warm_$arm --shapes 1024x4096 --bts 512 --arms $arm \
    --reps 1 $SWEEP > $OUT/warm_$arm.log 2>&1 &
done
K='(ring and not every_rule) or (ring and every_rule and s7 and not fastdiv) or (s6p0rNonee2-gluon_ws and not ring and (parity or poisoned))'
timeout 130 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 12 -k "$K" \
  > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
wait; echo "warm done"; grep -il "error" $OUT/warm_*.log
timeout 120 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 1024x4096,4096x4096 \
  --bts 512,1024 --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png; tail -n 2 $OUT/sweep.log
