#!/usr/bin/env bash
# Session 47, device call 6: on an H200 h200_call1.sh; elsewhere the card's identity, then the H100's AdamW int8
# 4096^2 BT 1024 row (two-buffer ring, eight stages, fast divisions, serial fills: 0.956-0.967 of bf16 in the
# last four H100 grids) against its twin without serial fills and the three-buffer rings (seven stages, with and
# without first_fill_after 2), interleaved, bits checked (config_ab.py).
#   bash results/2026-12-06/session47/call6.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
REFERENCE=winner ROUNDS=5 CELLS=4096x4096:1024 ARMS=adamw-int8 \
  VARY="serial_fills=False;tile_ring=3,num_stages=7,serial_fills=False;tile_ring=3,num_stages=7,serial_fills=False,first_fill_after=2" \
  timeout 300 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"; sed -n '/^summary:/,$p' "$OUT/ab.log"
