#!/usr/bin/env bash
# Session 47, device call 9: on an H200 h200_call1.sh; elsewhere the card's identity, the H100's AdamW int8
# 4096 x 12288 BT 16384 row (borrowed: tall) against the cooperative-tall configs (call 8 moved the bf16 row there,
# 1.081x; int8 read 1.01 of bf16 in call 4's grid on tall), the row set where a twin won (serial_rows.py), then the
# acceptance grid on the resulting winners (session 15's call4.sh) and the winners.csv it ran.
#   bash results/2026-12-06/session47/call9.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
mkdir -p /tmp/int8
OUT=/tmp/int8 REFERENCE=winner ROUNDS=5 CELLS=4096x12288:16384 ARMS=adamw-int8 \
  VARY="kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2;kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2,num_stages=6,fast_division=True" \
  timeout 200 python3 scripts/device/config_ab.py > /tmp/int8/ab.log 2>&1
echo "== int8 ab rc $?"; sed -n '/^summary:/,$p' /tmp/int8/ab.log | tee "$OUT/int8_summary.txt"
cp /tmp/int8/config_ab.csv "$OUT/int8_config_ab.csv"
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" /tmp/int8/config_ab.csv
cp forge_mcore/kernels/winners.csv "$OUT/winners.csv"
GRID_TIMEOUT=400 OUT=$OUT bash results/2026-12-01/session15/call4.sh
