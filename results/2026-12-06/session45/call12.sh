#!/usr/bin/env bash
# Session 45, device call 12 (an H100; call 11's second try found one too): each unit's main loop in the step of the
# committed 1024 x 4096 BT 512 winners (on an H100 now the first_fill_after 2 twins, its own rows) against alone.
#   bash results/2026-12-06/session45/call12.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
timeout 200 python3 results/2026-12-06/session45/ml_trace.py \
  --cells 1024x4096:512:sgdm-bf16,1024x4096:512:adamw-bf16,1024x4096:512:lion-bf16 2>&1 | tee "$OUT/ml_trace.log"
