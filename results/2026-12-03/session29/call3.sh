#!/usr/bin/env bash
# Session 29 call 3 (at the call 2 tree): the Gluon GPU tests of the other rules and the poisoned tiles (every
# Gluon config: the widening, the guard), then the acceptance grid (results/2026-12-01/session15/call4.sh tars
# $OUT with tests.log into call4.tgz).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="poisoned or (gluon_kernel_every_rule and (sgd or lion or rmsprop))" WORKERS=14 TIMEOUT=150 \
  bash scripts/device/gluon_tests.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-270} bash results/2026-12-01/session15/call4.sh
