#!/usr/bin/env bash
# Session 45, device call 14 (an H100; call 13, call 11's third try, found one too): the H100 grid's 4096^2 BT 1024
# misses (Lion 53.7%, int8 against bf16 0.962 in call 5) timed alone, by the grid's own method, in one process.
#   bash results/2026-12-06/session45/call14.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
timeout 170 python3 -m forge_mcore.bench.kernel --out "$OUT/lion4096" --shapes 4096x4096 --bts 1024 \
  --arms lion-bf16,adamw-int8,adamw-bf16 2>&1 | grep -E "ceilings|BT="
rm -f "$OUT"/lion4096/*.png
