#!/usr/bin/env bash
# Prepared in session 26, not run: (1) the tile ring's every-rule GPU tests (90: every rule case and
# codec on the three ring configs; session 26's call 4 stopped 12 of them on the test's own
# shared-memory formula, since fixed), then (2) the full acceptance grid on the winners session 26
# rewrote from its sweep (the ring configs on 1024 x 4096 and 4096² at BT <= 1024), tarred into
# call4.tgz by the grid script (the tool returns a limited number of files).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="ring and every_rule" WORKERS=14 TIMEOUT=200 bash scripts/device/gluon_tests.sh
GRID_TIMEOUT=280 bash results/2026-12-01/session15/call4.sh
