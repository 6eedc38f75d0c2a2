#!/usr/bin/env bash
# Session 52, call 4. On an H200 (none since session 44): the acceptance grid on the committed rows (the H200's own
# rows, no twins first: one call may be all it gets). On any other card: 4096 x 12288 BT 4096 int8 row against the
# bf16 rows' config (int8 met 0.97 of bf16 in call 1, not in call 3; main-loop
# bound), and 1024 x 4096 BT 1024's SGD-m / Lion row (59.9-60.7% of floor in calls 1 and 3) against its
# CONFIGS twins; serial_rows.py sets the twins that won; winners.csv comes back. Last, rule_cost.py on the LM
# head's AdamW int8 and bf16 at BT 16384 (one config, both synced now): whether int8's NaN step - main loop (its
# tile bytes' part, 30% fewer bytes) is still no shorter than bf16's.
#   bash results/2026-12-06/session52/call4.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > /tmp/card.txt
  GRID_TIMEOUT=${GRID_TIMEOUT:-420} bash results/2026-12-01/session15/call4.sh
  cp /tmp/card.txt "$OUT/"; exit
fi
. results/2026-12-06/session47/h200_or_card.sh
ab int8_4k 4096x12288:4096 adamw-int8 "epilogue_stages=1,wave_sync=600000;wave_sync=600000"
ab small_1k 1024x4096:1024 sgdm-bf16,lion-bf16 "tile_ring=3;serial_fills=True"
for d in int8_4k small_1k; do
  python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" "$OUT/$d/config_ab.csv"
done
cp forge_mcore/kernels/winners.csv "$OUT/"
mkdir -p "$OUT/rule_cost"
OUT=$OUT/rule_cost CELLS=151936x4096:16384 ARMS=adamw-int8,adamw-bf16 REPS=10 timeout 150 \
  python3 scripts/device/rule_cost.py 2>&1 | tail -4
