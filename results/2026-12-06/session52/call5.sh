#!/usr/bin/env bash
# Session 52, call 5 (run inline on call 4's card, this file written after): the LM head's AdamW int8 row at
# BT 16384 against its fast_division twin (call 4's rule_cost.py read int8's rule at 47% of step - main loop).
#   bash results/2026-12-06/session52/call5.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab fd 151936x4096:16384 adamw-int8 "fast_division=True"
