#!/usr/bin/env bash
# Session 28, call 3: the tile-ring GPU tests after the prefetch code's removal (260e841), then the
# acceptance grid on call 2's winners (results/2026-12-01/session15/call4.sh tars $OUT with tests.log
# into call4.tgz).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="ring2 or ring3" WORKERS=14 TIMEOUT=150 bash scripts/device/gluon_tests.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-260} bash results/2026-12-01/session15/call4.sh
