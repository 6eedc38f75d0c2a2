#!/usr/bin/env bash
# Session 47, device call 7 (an H100): the grid's method on one cell with the committed rows, then with the H100's
# rows set to the twins that won a config_ab.py run (serial_rows.py on CSV), then committed again; the card's
# identity beside it.
#   CSV=results/2026-12-06/session47/call6/config_ab.csv SHAPE=4096x4096 BT=1024 ARMS=adamw-int8 \
#     bash results/2026-12-06/session47/call7.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
cell() {
  timeout 150 python3 -m forge_mcore.bench.kernel --out "$OUT/$1" --shapes "$SHAPE" --bts "$BT" --arms "$ARMS" \
    --reps 30 > "$OUT/$1.log" 2>&1
  echo "== $1 rc $?"
  python3 -c "
import csv
for r in csv.DictReader(open('$OUT/$1/kernel.csv')):
    c = eval(r['config']); bf16 = r['bf16_ms'] and f\"int8/bf16 {float(r['bf16_ms']) / float(r['forge_ms']):.3f}\"
    print(r['arm'], round(float(r['forge_ms']) * 1e3, 1), 'us', round(float(r['pct_floor']), 1), '%', bf16 or '',
          c['kernel'], 'ring', c['tile_ring'], 'stages', c['num_stages'], 'ffa', c['first_fill_after'], 'serial', c['serial_fills'])"
  rm -f "$OUT/$1"/*.png
  tar czf "$OUT/$1.tgz" -C "$OUT" "$1" && rm -rf "${OUT:?}/$1"
}
cp forge_mcore/kernels/winners.csv /tmp/winners_committed.csv
cell committed
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" "$CSV"
cell twins
cp forge_mcore/kernels/winners.csv "$OUT/winners_twins.csv"
cp /tmp/winners_committed.csv forge_mcore/kernels/winners.csv
cell committed2
