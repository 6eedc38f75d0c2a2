#!/usr/bin/env bash
# Session 19 call 5 (warm after call 4): the acceptance grid again on the same commit, as run:
#   export PYTHONPATH=$PWD && OUT=$OUT GRID_TIMEOUT=300 timeout 400 bash results/2026-12-01/session15/call4.sh
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/out} GRID_TIMEOUT=300 exec bash "$(dirname "$0")/../../2026-12-01/session15/call4.sh"
