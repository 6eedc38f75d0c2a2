#!/usr/bin/env bash
# Session 52, call 6 (run inline on call 4's card, this file written after): the LM head's AdamW int8 and bf16 rows
# at BT 16384 against four and six slab stages (one epilogue stage, also tried, is refused by the cooperative-tall
# config before any tensor: the CHECK lines).
#   bash results/2026-12-06/session52/call6.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
for v in "epilogue_stages=1" "num_stages=4;num_stages=6"; do
  CHECK=1 REFERENCE=winner CELLS=151936x4096:16384 ARMS=adamw-int8 VARY="$v" python3 scripts/device/config_ab.py 2>&1 | tail -1
done
ab st 151936x4096:16384 adamw-int8,adamw-bf16 "num_stages=4;num_stages=6"
