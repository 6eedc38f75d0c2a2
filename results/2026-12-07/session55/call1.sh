#!/usr/bin/env bash
# Session 55, call 1: the acceptance grid on main's committed winners, on whichever card comes (H100 or H200), with
# the card's name, UUID and power limit in $OUT/card.txt. On an H100 it is the first grid with session 54's two LM head
# rows at BT 512 (SGD-m, Lion: the tall kernel with a buffer per pass); on an H200 the first grid since session 40.
#   bash results/2026-12-07/session55/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
GRID_TIMEOUT=${GRID_TIMEOUT:-480} bash results/2026-12-01/session15/call4.sh
