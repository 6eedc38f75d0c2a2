#!/usr/bin/env bash
# Session 46, device call 9: the slab probe (session 45's slab_trace.py; session46/slab_trace.patch is session 45's
# patch on this tree, applied here to the device's copy) on the AdamW bf16 BT 1024 cells whose H100 rows are the
# serial_fills twins, each against the same config without serial fills: do the slabs wait less?
#   bash results/2026-12-06/session46/call9.sh     (device, a copy of the repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
patch -p1 < results/2026-12-06/session46/slab_trace.patch || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 results/2026-12-06/session45/slab_trace.py --cells 1024x4096:1024:adamw-bf16,4096x4096:1024:adamw-bf16 \
  --vary serial_fills=False 2>&1 | grep -v Warn | tee "$OUT/slab_trace.log"
