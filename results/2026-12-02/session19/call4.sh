#!/usr/bin/env bash
# Session 19 call 4: the cooperative tall configs in CONFIGS (winners on the LM head at BT 16384):
# 1. the GPU tests that run CONFIGS only (accumulated steps) and every tile config's parity, for them;
# 2. the acceptance grid (session 15's call4.sh) on the committed winners;
# 3. the clock probe (its LM head window: SGD-m at BT 16384, now on the cooperative tall tile).
# Run as: mkdir -p $OUT && OUT=$OUT timeout 590 bash results/2026-12-02/session19/call4.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 120 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "coop_tall and (accumulated or every_tile_config)" -n 8 > $OUT/tests.log 2>&1
echo "tests rc $?"; tail -n 2 $OUT/tests.log; grep FAILED $OUT/tests.log | head -5
mkdir -p $OUT/grid && OUT=$OUT/grid GRID_TIMEOUT=${GRID_TIMEOUT:-300} bash results/2026-12-01/session15/call4.sh
timeout 100 python3 scripts/device/clock_probe.py > $OUT/clock_probe.log 2>&1
echo "clock probe rc $?"; tail -n 16 $OUT/clock_probe.log
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
