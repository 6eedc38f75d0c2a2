#!/usr/bin/env bash
# Session 45, device call 3: TileConfig.first_fill_after (the tile producer's first weight/state fill waits
# until that many dY/X slabs have landed). Call 2's traces: the step's first main loop takes 1.3x (SGD-m) to
# 1.7x (AdamW bf16) its length alone, the later ones 1.25x; the first fills go to HBM beside the first slabs.
#   bash results/2026-12-06/session45/call3.sh     (device, repository root; writes $OUT; env AB_ARMS, CELLS)
# (a) each 1024 x 4096 winner at BT 512/1024 against itself with first_fill_after 2, 4, 7 (bits checked first);
# (b) 4096^2 at BT 1024 (AdamW bf16, Lion) with 4 and 7; (c) ml_trace.py of first_fill_after 4.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
export REFERENCE=winner ROUNDS=5
AB_ARMS=${AB_ARMS:-"sgdm-bf16 adamw-bf16 lion-bf16"}
CELLS=${CELLS:-1024x4096:512,1024x4096:1024}
for arm in $AB_ARMS; do
  VARY="first_fill_after=2;first_fill_after=4;first_fill_after=7" WARM_ONLY=1 CELLS=$CELLS ARMS=$arm \
    timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
for arm in adamw-bf16 lion-bf16; do
  VARY="first_fill_after=4;first_fill_after=7" WARM_ONLY=1 CELLS=4096x4096:1024 ARMS=$arm \
    timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm4096_$arm.log" 2>&1 &
done
timeout 200 python3 results/2026-12-06/session45/ml_trace.py --vary first_fill_after=4 > "$OUT/ml_trace.log" 2>&1 &
wait; grep -h warmed "$OUT"/warm*.log
VARY="first_fill_after=2;first_fill_after=4;first_fill_after=7" CELLS=$CELLS ARMS=${AB_ARMS// /,} \
  timeout 150 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"
VARY="first_fill_after=4;first_fill_after=7" CELLS=4096x4096:1024 ARMS=adamw-bf16,lion-bf16 \
  timeout 80 python3 scripts/device/config_ab.py > "$OUT/ab4096.log" 2>&1
echo "== ab4096 rc $?"
sed -n '/^summary:/,$p' "$OUT/ab.log" "$OUT/ab4096.log"
cat "$OUT/ml_trace.log"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
