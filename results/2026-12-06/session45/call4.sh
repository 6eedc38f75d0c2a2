#!/usr/bin/env bash
# Session 45, device call 4: call 3's A/B again on 1024 x 4096 (its run stopped at AdamW bf16, whose winner's
# six-deep ring cannot wait for seven slabs): each winner at BT 512/1024 against itself with
# first_fill_after 1, 2, 3, 5 (bits checked first).
#   bash results/2026-12-06/session45/call4.sh     (device, repository root; writes $OUT; env AB_ARMS, CELLS)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
export REFERENCE=winner ROUNDS=${ROUNDS:-7} VARY="first_fill_after=1;first_fill_after=2;first_fill_after=3;first_fill_after=5"
AB_ARMS=${AB_ARMS:-"sgdm-bf16 adamw-bf16 lion-bf16"}
CELLS=${CELLS:-1024x4096:512,1024x4096:1024}
for arm in $AB_ARMS; do
  WARM_ONLY=1 CELLS=$CELLS ARMS=$arm timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait; grep -h warmed "$OUT"/warm*.log | cut -c1-200
CELLS=$CELLS ARMS=${AB_ARMS// /,} timeout 300 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"; grep -v "^{" "$OUT/ab.log" | tail -5
sed -n '/^summary:/,$p' "$OUT/ab.log"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
