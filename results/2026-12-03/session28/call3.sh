#!/usr/bin/env bash
# Session 28, call 3: the tile-ring GPU tests after the prefetch code's removal (260e841), then the
# acceptance grid on call 2's winners (results/2026-12-01/session15/call4.sh tars $OUT with tests.log
# into call4.tgz).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 150 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 14 \
  -k "ring2 or ring3" -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
GRID_TIMEOUT=${GRID_TIMEOUT:-260} bash results/2026-12-01/session15/call4.sh
