#!/usr/bin/env bash
# Session 27, call 3: the tile ring of two column halves (TileConfig.tile_ring=2: a slab stage more than
# three halves leave, seven-deep beside AdamW's bf16 moments, eight with 4 B per element).
# (1) its GPU tests (TESTS, default every ring2 test and the ring3 parity tests: the ring's count became a
# constexpr; TESTS_TIMEOUT)
# while four processes compile the ping-pong configs per arm; (2) if they pass, every ping-pong config
# swept on the five shapes at BT 512/1024, the winners rewritten from that sweep here
# (``--winners``: best of kernel.csv and sweep.csv), and (3) the acceptance grid on them. Tarred.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs all --sweep-kernels gluon_ws"
SHAPE=1024x4096 SWEEP="$SWEEP" WARM_TIMEOUT=150 bash scripts/device/warm_sweep.sh > $OUT/warm.log 2>&1 &
timeout ${TESTS_TIMEOUT:-150} python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -n 12 -k "${TESTS:-ring2 or (ring3 and parity)}" -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
TESTS_RC=$?
echo "tests rc $TESTS_RC"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
wait; cat $OUT/warm.log
if [ $TESTS_RC -eq 0 ]; then
  timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sweep \
    --shapes 1024x4096,4096x4096,12288x4096,4096x12288,151936x4096 --bts 512,1024 \
    --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > $OUT/sweep.log 2>&1
  echo "sweep rc $?"; rm -f $OUT/sweep/*.png
  python3 -m forge_mcore.bench.kernel --winners $OUT/sweep/kernel.csv && cp forge_mcore/kernels/winners.csv $OUT/
fi
mkdir -p $OUT/g && OUT=$OUT/g GRID_TIMEOUT=${GRID_TIMEOUT:-240} bash results/2026-12-01/session15/call4.sh
# (TAR: the archive's name; it must differ from the grid script's own call4.tgz, which call 4's run
# excluded from its archive)
TAR=${TAR:-call3}
cd $OUT && tar czf /tmp/$TAR.tgz --exclude=$TAR.tgz . && rm -rf $OUT/* && mv /tmp/$TAR.tgz $OUT/
