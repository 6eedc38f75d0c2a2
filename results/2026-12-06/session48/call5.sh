#!/usr/bin/env bash
# Session 48, device call 5: on an H200 session 47's h200_call1.sh with TWINS_ONLY=1 (this call's budget is short);
# elsewhere the card's identity, then the LM head's AdamW at BT 16384 per arm under clock_probe.py (int8 read
# 0.940 and 0.957 of the bf16 step beside it in calls 1 and 4, both on cooperative tall): does int8 take more
# cycles per step, or the same cycles at a lower clock (session 31 on the H200's tall rows: a 5% lower clock)?
#   bash results/2026-12-06/session48/call5.sh     (device, repository root; writes $OUT)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
CELLS="151936x4096:16384:adamw-int8+adamw-bf16+mainloop:adamw-int8+mainloop:adamw-bf16+cublas" \
  OUT=$OUT timeout 200 python3 scripts/device/clock_probe.py > "$OUT/probe.log" 2>&1
echo "probe rc $?"; tail -n 14 "$OUT/probe.log"
