#!/usr/bin/env bash
# Session 54, call 4 (run inline on call 3's warm machine; written out after): the LM head at BT 512, SGD-m and Lion,
# the tall rows against the pass-buffer twin (TileConfig.epilogue_stages 4, six BK 32 stages) and the same ring
# with one buffer per consumer (config_ab.py, REFERENCE=winner, five rounds, bits compared first).
#   bash results/2026-12-06/session54/call4.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
mkdir -p $OUT/lm512
OUT=$OUT/lm512 REFERENCE=winner ROUNDS=5 CELLS=151936x4096:512 ARMS=sgdm-bf16,lion-bf16 \
  VARY="epilogue_stages=4,block_k=32,num_stages=6;block_k=32,num_stages=6" timeout 100 python3 \
  scripts/device/config_ab.py > $OUT/lm512/ab.log 2>&1
echo rc $?; sed -n '/^summary:/,$p' $OUT/lm512/ab.log
