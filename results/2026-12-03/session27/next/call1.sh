#!/usr/bin/env bash
# Prepared in session 27, not run: (1) every tile-ring GPU test (two and three buffers, per-consumer
# ready barriers: `gluon_wgrad._ring_ready`; the L2-prefetching candidates among them) alone on the
# machine (session 27's call 4 ran 282 of ~284 beside a parallel compile before its time limit), then
# (2) the full acceptance grid, the first with
# the int8 cells' interleaved bf16 twin (`Cell.bf16_ms`), tarred into call4.tgz by the grid script
# together with tests.log.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="ring" WORKERS=14 TIMEOUT=300 bash scripts/device/gluon_tests.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-260} bash results/2026-12-01/session15/call4.sh
