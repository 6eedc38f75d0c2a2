#!/usr/bin/env bash
# Session 28, call 1: session 27's prepared next/call1.sh tests (every tile-ring GPU test alone: both ring
# sizes after the parity table, the L2-prefetching candidates among them) then its next/call3.sh sweep (the
# prefetching candidates beside the winners on 1024 x 4096 and 4096² at BT 512/1024; its adamw-int8 cells are
# the first GPU run of the interleaved bf16 twin, `Cell.bf16_ms`). The grid waits for the winners.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="ring" WORKERS=14 TIMEOUT=220 bash scripts/device/gluon_tests.sh
WARM_TIMEOUT=120 bash results/2026-12-03/session27/next/call3.sh
