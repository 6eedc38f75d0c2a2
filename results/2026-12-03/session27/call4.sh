#!/usr/bin/env bash
# Session 27, call 4 (call 3 again, after its ring2 tests failed: per-consumer ready barriers, `_ring_ready`): the tile ring of two column halves (TileConfig.tile_ring=2: a slab stage more than
# three halves leave, seven-deep beside AdamW's bf16 moments, eight with 4 B per element).
# (1) every ring GPU test (two and three buffers)
# while four processes compile the ping-pong configs per arm; (2) if they pass, every ping-pong config
# swept on the five shapes at BT 512/1024, the winners rewritten from that sweep here
# (``--winners``: best of kernel.csv and sweep.csv), and (3) the acceptance grid on them. Tarred.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs all --sweep-kernels gluon_ws"
SHAPE=1024x4096 SWEEP="$SWEEP" WARM_TIMEOUT=150 bash scripts/device/warm_sweep.sh > $OUT/warm.log 2>&1 &
timeout 170 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 12 \
  -k "ring" -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
TESTS=$?
echo "tests rc $TESTS"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
wait; cat $OUT/warm.log
if [ $TESTS -eq 0 ]; then
  timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sweep \
    --shapes 1024x4096,4096x4096,12288x4096,4096x12288,151936x4096 --bts 512,1024 \
    --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
  echo "sweep rc $?"; rm -f $OUT/sweep/*.png
  python3 -m forge_mcore.bench.kernel --winners $OUT/sweep/kernel.csv && cp forge_mcore/kernels/winners.csv $OUT/
fi
mkdir -p $OUT/g && OUT=$OUT/g GRID_TIMEOUT=${GRID_TIMEOUT:-240} bash results/2026-12-01/session15/call4.sh
cd $OUT && tar czf /tmp/call4.tgz --exclude=call4.tgz . && rm -rf $OUT/* && mv /tmp/call4.tgz $OUT/
