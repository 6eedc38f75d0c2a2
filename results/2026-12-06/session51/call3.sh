#!/usr/bin/env bash
# Session 51, device call 3 (run inline on the card of call 2, this file written after it): rule_cost.py on the LM
# head's AdamW int8 and bf16 at BT 16384 three more times, every graph of both arms interleaved (twenty
# repetitions), the third with the arms' order swapped: how far apart one config's main loops and the two arms'
# steps come out from run to run.
#   bash results/2026-12-06/session51/call3.sh     (device, repository root; writes $OUT)
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
for i in 1 2; do
  CELLS=151936x4096:16384 ARMS=adamw-int8,adamw-bf16 REPS=20 OUT=$OUT timeout 200 python3 scripts/device/rule_cost.py
  cp "$OUT/rule_cost.csv" "$OUT/rule_cost_$i.csv"
done
CELLS=151936x4096:16384 ARMS=adamw-bf16,adamw-int8 REPS=20 timeout 150 python3 scripts/device/rule_cost.py
cp "$OUT/rule_cost.csv" "$OUT/rule_cost_swapped.csv"
