#!/usr/bin/env bash
# Session 56, call 2: the tall and cooperative-tall configs' GPU tests outside the LM head (their unit code changed in
# 65b1333; call 1's whole-suite run stopped at its 360 s limit with 1,155 passed and none failed, the order not
# saying which ran), then the acceptance grid on whichever card this is (session 55's call1.sh, card.txt).
#   bash results/2026-12-07/session56/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
SELECT="tall and not 151936" NAME=tall WORKERS=10 TIMEOUT=100 bash results/2026-12-04/session31/call3.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-440} bash results/2026-12-07/session55/call1.sh
