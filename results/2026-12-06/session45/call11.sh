#!/usr/bin/env bash
# Session 45, device call 11 (an H200 only; on any other card it stops at once): the H200's 1024 x 4096 and 4096^2
# BT 512 ring winners against their first_fill_after 2 twins (bits checked first), then the acceptance grid with
# the twins in this tree's winners.csv (set_first_fill.py; brought back as $OUT/winners.csv).
#   bash results/2026-12-06/session45/call11.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
grep -q H200 "$OUT/card.txt" || { echo "not an H200: stopped"; exit 0; }
CELLS=1024x4096:512,4096x4096:512
for arm in sgdm-bf16 lion-bf16 adamw-bf16 adamw-int8; do
  REFERENCE=winner VARY="first_fill_after=2" WARM_ONLY=1 CELLS=$CELLS ARMS=$arm \
    timeout 150 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait
REFERENCE=winner VARY="first_fill_after=2" ROUNDS=5 CELLS=$CELLS ARMS=sgdm-bf16,lion-bf16,adamw-bf16,adamw-int8 \
  timeout 120 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"
sed -n '/^summary:/,$p' "$OUT/ab.log"
mkdir -p "$OUT/ab" && mv "$OUT"/ab.log "$OUT"/config_ab.csv "$OUT"/warm_*.log "$OUT/ab/"
python3 results/2026-12-06/session45/set_first_fill.py "NVIDIA H200" 2 1024x4096:512 4096x4096:512
cp forge_mcore/kernels/winners.csv "$OUT/"
GRID_TIMEOUT=${GRID_TIMEOUT:-300} OUT=$OUT bash results/2026-12-01/session15/call4.sh
