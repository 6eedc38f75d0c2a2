#!/usr/bin/env bash
# Session 57, for an H200 with under ~250 s of call time (it stops at once on any other card; call3.sh runs it,
# then the grid): session 47's two twins (h200_call1.sh with TWINS_ONLY=1) one at a time, the shorter first —
# 4096^2 Lion BT 1024 on the tall config, then the LM head's AdamW int8 BT 16384 on cooperative-tall — each row set
# where its twin won (serial_rows.py) and winners.csv and the A/B's files copied to $OUT as soon as it ends, so a
# limit that stops the second keeps the first.
#   bash results/2026-12-07/session57/call4.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card_uuid.txt"
grep -q H200 "$OUT/card_uuid.txt" || { echo "not an H200: stopped"; exit 0; }
twin() {  # name, VARY, cell, arm, timeout
  mkdir -p "$OUT/$1"
  OUT=$OUT/$1 REFERENCE=winner VARY="$2" ROUNDS=5 CELLS=$3 ARMS=$4 timeout "$5" python3 scripts/device/config_ab.py \
    > "$OUT/$1/ab.log" 2>&1
  echo "== $1 ab rc $?"; sed -n '/^summary:/,$p' "$OUT/$1/ab.log"
  python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H200" "$OUT/$1/config_ab.csv"
  cp forge_mcore/kernels/winners.csv "$OUT/"
}
twin lion1k "kernel=gluon_tall,block_m=128,num_stages=5,tile_ring=0" 4096x4096:1024 lion-bf16 120
twin lm16k "kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2" 151936x4096:16384 adamw-int8 200
