#!/usr/bin/env bash
# Session 19 call 2: cooperative 256-row tiles (configs.CANDIDATES, kernel "gluon_coop_tall": each
# consumer a tall 128-row half; 24 B of slabs per output and k-step instead of 32).
# 1. their GPU tests (parity with bf16/fp32/int8 states and every codec, main-loop-only, traced);
#    on a failure nothing is timed;
# 2. a sweep at BT 512/1024 on the five shapes, every arm, ping-pong, tall and cooperative tall
#    configs in one process; --winners (winners.csv back in $OUT);
# 3. the acceptance grid on those winners (session 15's call4.sh).
# Run as: mkdir -p $OUT && OUT=$OUT timeout 590 bash results/2026-12-02/session19/call2.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 150 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -k coop_tall -n 8 \
  > $OUT/tests.log 2>&1
rc=$?; echo "coop_tall GPU tests rc $rc"; tail -n 3 $OUT/tests.log; grep FAILED $OUT/tests.log | head -5
if [ $rc -eq 0 ]; then
  SHAPES=4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 BTS=512,1024 \
    ARMS=adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 KERNELS=gluon_ws,gluon_tall,gluon_coop_tall TIMEOUT=170 \
    OUT=$OUT bash scripts/device/sweep_winners.sh
  mkdir -p $OUT/grid && OUT=$OUT/grid GRID_TIMEOUT=${GRID_TIMEOUT:-200} bash results/2026-12-01/session15/call4.sh
fi
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
