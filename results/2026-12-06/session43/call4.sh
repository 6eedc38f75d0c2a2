#!/usr/bin/env bash
# Session 43, device call 4: is the 1024 x 4096 step's lost overlap its HBM traffic or its on-chip traffic?
# Call 1 (H100): the tile-ring winners with halves asked into L2 ahead lost 1-12%, and a plain Triton tile
# read-modify-write of the same bytes streams at 83-86% of the copy ceiling where the step at BT 64 reaches 73%.
# (a) scripts/device/graph_length.py with its "step warm" arm: the step on one rotation set, its weight and
# states L2-resident (16-24 MB), beside the rotating step, its main loop alone and cuBLAS, each fitted to a
# per-call steady state over graphs of 1-12 calls. Warm near the main loop: the HBM traffic is what does not
# overlap; warm near the rotating step: shared memory, L2 or the rule do. (b) tile_stream.py on 1024 x 4096
# (on an H200: how a plain tile stream scales with the copy ceiling, against call 1's H100). (c) the phase
# timeline (cycles per consumer in its main loops, tile waits and rules); it times and traces its step on one
# weight set, so at 1024 x 4096 that is the L2-warm step, to set beside (a)'s.
#   bash results/2026-12-06/session43/call4.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
CELLS="1024x4096:512:sgdm-bf16;1024x4096:1024:sgdm-bf16;1024x4096:512:adamw-bf16;1024x4096:64:sgdm-bf16"
CELLS=$CELLS LENGTHS=1,3,6,12 REPS=20 OUT=$OUT timeout 200 python3 scripts/device/graph_length.py \
  > "$OUT/length.log" 2>&1
echo "== graph_length rc $?"; grep -v Warning "$OUT/length.log"
SHAPE=1024x4096 OUT=$OUT timeout 120 python3 scripts/device/tile_stream.py > "$OUT/stream.log" 2>&1
echo "== tile_stream rc $?"; grep -v Warning "$OUT/stream.log"
timeout 150 python3 -m forge_mcore.bench.timeline --out "$OUT/timeline" --shapes 1024x4096 --bts 512,1024 \
  --arms sgdm-bf16,adamw-bf16 > "$OUT/timeline.log" 2>&1
echo "== timeline rc $?"; grep -v Warning "$OUT/timeline.log" | tail -20; rm -f "$OUT/timeline/traces.pt"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
