#!/usr/bin/env bash
# Session 46, device call 8 (an inline command then; this is it): the AdamW BT 1024 cells by the grid's method on the
# H100's committed rows (the serial_fills twins since commit 5e44d6f).
#   bash results/2026-12-06/session46/call8.sh     (device, repository root; writes $OUT)
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 -m forge_mcore.bench.kernel --out $OUT/adamw1k --shapes 1024x4096,4096x4096,12288x4096,4096x12288 \
  --bts 1024 --arms adamw-bf16,adamw-int8 > $OUT/adamw1k.log 2>&1
echo rc $?; grep -E "BT=" $OUT/adamw1k.log; rm -f $OUT/adamw1k/*.png
