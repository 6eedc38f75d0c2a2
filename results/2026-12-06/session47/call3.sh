#!/usr/bin/env bash
# Session 47, device call 3 (an H100): the grid's method on 4096^2 BT 1024 (Lion, SGD-m, AdamW bf16) with the
# committed rows, then with the H100's rows set to the twins that won call 3's config_ab run (Lion on the tall
# config: 1.125x the three-buffer ring; SGD-m's tall config with one shared tile buffer: 1.031x), then the committed
# rows again; the card's identity beside it (machines of one kind have ranked these configs apart).
#   bash results/2026-12-06/session47/call3.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid,serial,power.limit,clocks.max.sm,clocks.max.mem,vbios_version --format=csv | tee "$OUT/card.txt"
grid() {
  timeout 120 python3 -m forge_mcore.bench.kernel --out "$OUT/$1" --shapes 4096x4096 --bts 1024 \
    --arms lion-bf16,sgdm-bf16,adamw-bf16 --reps 30 > "$OUT/$1.log" 2>&1
  echo "== $1 rc $?"; grep -h "pct\|%" "$OUT/$1.log" | tail -3
  python3 -c "
import csv
for r in csv.DictReader(open('$OUT/$1/kernel.csv')):
    c = eval(r['config']); print(r['arm'], round(float(r['forge_ms']) * 1e3, 1), 'us', round(float(r['pct_floor']), 1), '%', c['kernel'], c['tile_ring'], c['epilogue_stages'])"
  rm -f "$OUT/$1"/*.png
}
cp forge_mcore/kernels/winners.csv /tmp/winners_committed.csv
grid committed
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" results/2026-12-06/session47/call3/config_ab.csv
grid twins
cp forge_mcore/kernels/winners.csv "$OUT/winners_twins.csv"
cp /tmp/winners_committed.csv forge_mcore/kernels/winners.csv
grid committed2
