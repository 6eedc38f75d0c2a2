#!/usr/bin/env bash
# Session 45, device call 5 (an H200): the 1024 x 4096 BT 512 winners with first_fill_after 2 (committed in the
# tree this runs on) against themselves without it (bits checked first), then the acceptance grid on them.
#   bash results/2026-12-06/session45/call5.sh     (device, repository root; writes $OUT)
# Ran on 76a0a5f, whose H200 rows held the first_fill_after twins; since eb81817 they hold the old configs, so on
# today's tree this A/B compares a config with itself: use call11.sh instead.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu_ab.txt"; cat "$OUT/gpu_ab.txt"
for arm in sgdm-bf16 lion-bf16 adamw-bf16 adamw-int8; do
  REFERENCE=winner VARY="first_fill_after=0" WARM_ONLY=1 CELLS=1024x4096:512 ARMS=$arm \
    timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait; grep -h warmed "$OUT"/warm_*.log | cut -c1-160
REFERENCE=winner VARY="first_fill_after=0" ROUNDS=7 CELLS=1024x4096:512 ARMS=sgdm-bf16,lion-bf16,adamw-bf16,adamw-int8 \
  timeout 150 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"; grep -v "^{" "$OUT/ab.log" | tail -3
sed -n '/^summary:/,$p' "$OUT/ab.log"
mkdir -p "$OUT/ab" && mv "$OUT"/ab.log "$OUT"/config_ab.csv "$OUT"/warm_*.log "$OUT/ab/"
GRID_TIMEOUT=${GRID_TIMEOUT:-400} OUT=$OUT bash results/2026-12-01/session15/call4.sh
