#!/usr/bin/env bash
# Session 52, call 7: with wave_sync the LM head's int8 rule shows (call 4, rule_cost.py: step - NaN step 1.36 ms,
# 47% of step - main loop; bf16's hidden), since the cooperative-tall kernel's consumers run the rule between
# main loops. The tall kernel's 600 k twins (in CONFIGS; the H100 rows at BT 4096) at BT 16384 for int8 and bf16
# against the cooperative-tall rows (config_ab.py, REFERENCE=winner, five rounds, bits and the kernel that ran);
# serial_rows.py sets a twin that won; winners.csv comes back.
#   bash results/2026-12-06/session52/call7.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab tall16k 151936x4096:16384 adamw-int8,adamw-bf16 \
  "kernel=gluon_tall,block_m=128,block_k=64,num_stages=5,epilogue_stages=1;kernel=gluon_tall,block_m=128,block_k=64,num_stages=4,epilogue_stages=2"
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" "$OUT/tall16k/config_ab.csv"
cp forge_mcore/kernels/winners.csv "$OUT/"
