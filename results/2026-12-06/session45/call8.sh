#!/usr/bin/env bash
# Session 45, device call 8 (what ran: an H100): first_fill_after 2 on the BT <= 1024 winners of the larger
# shapes, each winner against itself (bits checked first; the compile cache of calls 3-7 warm).
#   bash results/2026-12-06/session45/call8.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 REFERENCE=winner VARY="first_fill_after=2" ROUNDS=5
CELLS=4096x4096:512,12288x4096:512,4096x4096:1024
for a in sgdm-bf16 adamw-bf16 lion-bf16; do
  WARM_ONLY=1 CELLS=$CELLS ARMS=$a timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$a.log" 2>&1 &
done
wait
CELLS=$CELLS ARMS=sgdm-bf16,adamw-bf16,lion-bf16 timeout 200 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo rc $?
sed -n '/^summary:/,$p' "$OUT/ab.log"
