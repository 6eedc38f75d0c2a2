#!/usr/bin/env bash
# Session 22, call 9: the acceptance grid again on main (42bb7d7; the kernel as in call 2), a second sample
# of the counts (results/2026-12-01/session15/call4.sh, GRID_TIMEOUT 300).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p $OUT/grid_call && OUT=$OUT/grid_call GRID_TIMEOUT=300 bash results/2026-12-01/session15/call4.sh
