#!/usr/bin/env bash
# Session 47, first call on an H200 (it stops at once on any other card, printing the card): session 46's h200.sh
# with PARTS=serial (the H200's AdamW BT 1024 winners against their serial_fills twins, rows set), then the LM head's
# AdamW int8 BT 16384 winner (tall) against the H100's row there (cooperative tall; session 35 on an H200 had tall
# ahead, 33.8 vs 35.9 ms, before the codes moved to fragment order), the H200's row set where the twin won
# (serial_rows.py sets any CONFIGS twin that won), and Lion's 4096^2 BT 1024 winner (the three-buffer ring) against
# the tall config (on an H100 in session 47, call 3: 1.125x, the grid's method 62.7% against 55.7%), set the same
# way. winners.csv and the logs come back in $OUT.
#   bash results/2026-12-06/session47/h200_call1.sh     (device, repository root; writes $OUT)
#   TWINS_ONLY=1 skips the serial part (~2 minutes instead of ~6, for a short budget).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || {
  nvidia-smi --query-gpu=name --format=csv,noheader; echo "not an H200: stopped"; exit 0; }
[ "${TWINS_ONLY:-0}" = 1 ] || PARTS=serial bash results/2026-12-06/session46/h200.sh
mkdir -p "$OUT/lm16k"
OUT=$OUT/lm16k REFERENCE=winner VARY="kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2" ROUNDS=5 \
  CELLS=151936x4096:16384 ARMS=adamw-int8 timeout 200 python3 scripts/device/config_ab.py > "$OUT/lm16k/ab.log" 2>&1
echo "== lm16k ab rc $?"; sed -n '/^summary:/,$p' "$OUT/lm16k/ab.log"
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H200" "$OUT/lm16k/config_ab.csv"
mkdir -p "$OUT/lion1k"
OUT=$OUT/lion1k REFERENCE=winner VARY="kernel=gluon_tall,block_m=128,num_stages=5,tile_ring=0" ROUNDS=5 \
  CELLS=4096x4096:1024 ARMS=lion-bf16 timeout 120 python3 scripts/device/config_ab.py > "$OUT/lion1k/ab.log" 2>&1
echo "== lion1k ab rc $?"; sed -n '/^summary:/,$p' "$OUT/lion1k/ab.log"
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H200" "$OUT/lion1k/config_ab.csv"
cp forge_mcore/kernels/winners.csv "$OUT/"
tar czf "$OUT/twins.tgz" -C "$OUT" lm16k lion1k && rm -rf "$OUT/lm16k" "$OUT/lion1k"
