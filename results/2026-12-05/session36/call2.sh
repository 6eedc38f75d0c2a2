#!/usr/bin/env bash
# Session 36, device call 2 (committed kernel, a895a3d): where 1024 x 4096's BT <= 1024 misses lose time now.
# 1. the phase timeline of each SM (python -m forge_mcore.bench.timeline): how far apart the SMs end, and
#    what a balanced end would save (results/2026-12-05/session36/spread.py reads call2/timeline/traces.pt);
# 2. graph_length.py: each miss's steady state per call (graphs of 1-24 calls) beside its main loop and cuBLAS.
#   bash results/2026-12-05/session36/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 OUT
timeout 240 python3 -m forge_mcore.bench.timeline --out "$OUT/timeline" --shapes 1024x4096 --bts 512,1024 \
  --arms sgdm-bf16,lion-bf16,adamw-bf16 > "$OUT/timeline.log" 2>&1
echo "timeline rc $?"; cut -c1-400 "$OUT/timeline.log" | tail -n 6
CELLS="1024x4096:512:sgdm-bf16;1024x4096:512:lion-bf16;1024x4096:1024:sgdm-bf16;1024x4096:1024:lion-bf16;1024x4096:1024:adamw-bf16;4096x4096:1024:adamw-bf16;4096x4096:1024:lion-bf16" \
  timeout 300 python3 scripts/device/graph_length.py > "$OUT/graph_length.log" 2>&1
echo "graph_length rc $?"; cat "$OUT/graph_length.log" | grep "fit" | cut -c1-200
