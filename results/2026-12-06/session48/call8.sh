#!/usr/bin/env bash
# Session 48, device call 8: on an H200 session 47's h200_call1.sh with TWINS_ONLY=1; elsewhere the card's identity,
# then clock_probe.py on the LM head at BT 16384 with five- and six-stage cooperative-tall rings (call 7: six stages
# 0.768x five for AdamW int8): fewer cycles lost, or a lower clock?
#   bash results/2026-12-06/session48/call8.sh     (device, repository root; writes $OUT)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
CELLS="151936x4096:16384:adamw-int8+adamw-int8@num_stages=6+sgdm-bf16+sgdm-bf16@num_stages=6+mainloop:sgdm-bf16" \
  OUT=$OUT timeout 200 python3 scripts/device/clock_probe.py > "$OUT/probe.log" 2>&1
echo "probe rc $?"; tail -n 10 "$OUT/probe.log"
