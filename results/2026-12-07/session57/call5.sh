#!/usr/bin/env bash
# Session 57, call 5: on the H100 that call4.sh stopped on (the budget's last ~215 s), the acceptance grid on this
# tree's rows, the card named first.
#   bash results/2026-12-07/session57/call5.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > /tmp/card.txt
GRID_TIMEOUT=${GRID_TIMEOUT:-185} bash results/2026-12-01/session15/call4.sh
mv /tmp/card.txt "$OUT/"
