#!/usr/bin/env bash
# Session 23 call 2 (f2d4e32 + scripts/device/graph_length.py): how much of a graph-timed call is the
# graph's entry and exit, with the PDL launch and without (FORGE_PDL=0); then the acceptance grid.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p $OUT/pdl $OUT/nopdl
OUT=$OUT/pdl timeout 150 python3 scripts/device/graph_length.py > $OUT/pdl/output.log 2>&1; echo "pdl rc $?"
OUT=$OUT/nopdl FORGE_PDL=0 timeout 150 python3 scripts/device/graph_length.py > $OUT/nopdl/output.log 2>&1; echo "nopdl rc $?"
grep -h "fit" $OUT/pdl/output.log $OUT/nopdl/output.log
GRID_TIMEOUT=280 bash results/2026-12-01/session15/call4.sh
