#!/usr/bin/env bash
# Session 46, device call 1 (after session 45's call11, which stopped on the H100): TileConfig.serial_fills (a tile
# ring's fill waits for the one before it to land; it ran on a patch of the tree that commit 5e44d6f merged) against
# each ring winner, bits checked first, on the cells whose winners are rings (the 4096^2 BT 1024 SGD-m winner is a
# tall tile: left out).
#   bash results/2026-12-06/session46/call_serial.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
RING_CELLS=1024x4096:512,1024x4096:1024,4096x4096:512
cells() { [ "$1" = sgdm-bf16 ] && echo $RING_CELLS || echo $RING_CELLS,4096x4096:1024; }
for arm in sgdm-bf16 lion-bf16 adamw-bf16 adamw-int8; do
  REFERENCE=winner VARY="serial_fills=True" WARM_ONLY=1 CELLS=$(cells $arm) ARMS=$arm \
    timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait
for arm in sgdm-bf16 lion-bf16 adamw-bf16 adamw-int8; do
  REFERENCE=winner VARY="serial_fills=True" ROUNDS=5 CELLS=$(cells $arm) ARMS=$arm \
    timeout 100 python3 scripts/device/config_ab.py > "$OUT/ab_$arm.log" 2>&1
  echo "== $arm rc $?"
  sed -n '/^summary:/,$p' "$OUT/ab_$arm.log"
  mv "$OUT/config_ab.csv" "$OUT/config_ab_$arm.csv" 2>/dev/null
done
