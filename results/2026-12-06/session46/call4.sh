#!/usr/bin/env bash
# Session 46, device call 4: on an H200, session 45's call11 (the twins, then the grid); on an H100 the acceptance
# grid on this tree's winners (the H100's new 4096^2 BT 16384 AdamW bf16 and Lion rows from call 3's sweep).
#   bash results/2026-12-06/session46/call4.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-06/session45/call11.sh; exit
fi
GRID_TIMEOUT=${GRID_TIMEOUT:-420} OUT=$OUT bash results/2026-12-01/session15/call4.sh
