#!/usr/bin/env bash
# Session 41, device call 2: what a call of the committed kernel costs in a stream when it has almost nothing to
# do, against cuBLAS's wgrad and a one-element torch kernel (scripts/device/graph_length.py: graphs of 1-24
# calls, fitted as per-graph overhead + per-call steady state). 128 x 128 at BT 64 is one 64 x 128 unit on one
# program (the launch, the PDL wait, the prologue and the end of a 132-program persistent grid); 1024 x 4096 at
# BT 64 all of its tile traffic beside an eight-fold shorter main loop; BT 512 a cell that misses.
#   bash results/2026-12-05/session41/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
CELLS="128x128:64:sgdm-bf16;1024x4096:64:sgdm-bf16;1024x4096:512:sgdm-bf16" \
  LENGTHS=1,3,12,24 REPS=30 OUT=$OUT timeout 180 python3 scripts/device/graph_length.py > "$OUT/graph_length.log" 2>&1
echo "rc $?"; cat "$OUT/graph_length.log" | grep -v Warning
