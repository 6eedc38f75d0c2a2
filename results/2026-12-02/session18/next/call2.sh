#!/usr/bin/env bash
# Session 19's second device call, warm after call 1 (copy call 1's winners.csv into
# forge_mcore/kernels/ first, within the 30 s the machine stays warm): the acceptance grid.
set -u
OUT=${OUT:-/tmp/out}
GRID_TIMEOUT=330 bash results/2026-12-01/session15/call4.sh
