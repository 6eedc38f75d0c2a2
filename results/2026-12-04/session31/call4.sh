#!/usr/bin/env bash
# Session 31, device call 4: where AdamW int8 loses to its bf16 twin at BT >= 4096, per consumer phase
# (forge_mcore.bench.timeline): the LM head at BT 16384 (int8 0.916 of bf16 in session 30's grid; bf16 wins on
# cooperative-tall tiles, int8 on tall ones) with every cooperative-tall config beside each arm's winner, and
# 12288 x 4096 at BT 4096 (0.968) on the winners.
#   bash results/2026-12-04/session31/call4.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 330 python3 -m forge_mcore.bench.timeline --out "$OUT/lm_head" --shapes 151936x4096 --bts 16384 \
  --arms adamw-int8,adamw-bf16 --kernels gluon_coop_tall --reps 10 --plots 2 > "$OUT/lm_head.log" 2>&1
echo "lm head rc $?"
timeout 150 python3 -m forge_mcore.bench.timeline --out "$OUT/wide" --shapes 12288x4096 --bts 4096 \
  --arms adamw-int8,adamw-bf16 --reps 20 --plots 2 > "$OUT/wide.log" 2>&1
echo "12288x4096 rc $?"
rm -f "$OUT"/*/traces.pt  # (python results/2026-12-04/session31/compare.py prints the phases from timeline.csv)
