#!/usr/bin/env bash
# Session 30, device call 6: the int8 fast-division twins of the tall, cooperative and cooperative-tall
# winners (configs.py, after the loop-carried half took the int8 tall spill to 16-24 B): their GPU tests,
# their bits against the winner (config_ab.py WARM_ONLY), then every Gluon config swept for AdamW int8 at
# BT 4096/16384 on all 5 shapes, the winners written on the device, and the grid on them, one call.
#   bash results/2026-12-04/session30/call6.sh
# (The sweep and its winners as scripts/device/sweep_winners.sh runs them; the call ran the same commands inline.)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout ${TEST_TIMEOUT:-150} python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "fastdiv and (gluon_tall or gluon_coop) and int8" -n 12 --dist loadgroup -rf --tb=line -W ignore \
  > "$OUT/tests.log" 2>&1
rc=$?; echo "tests rc $rc"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
[ $rc -eq 0 ] || exit 1
REFERENCE=winner VARY="fast_division=True" ARMS=adamw-int8 CELLS=4096x4096:4096,1024x4096:4096,4096x12288:16384 \
  WARM_ONLY=1 OUT=$OUT timeout 90 python3 scripts/device/config_ab.py > "$OUT/bits.log" 2>&1
echo "bits rc $?"; tail -n 6 "$OUT/bits.log"
SHAPES=4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 BTS=4096,16384 ARMS=adamw-int8 \
  KERNELS=gluon_tall,gluon_coop,gluon_coop_tall NAME=sweep TIMEOUT=${SWEEP_TIMEOUT:-150} \
  OUT=$OUT bash scripts/device/sweep_winners.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-180} OUT=$OUT bash results/2026-12-01/session15/call4.sh
