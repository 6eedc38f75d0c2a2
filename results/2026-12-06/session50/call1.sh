#!/usr/bin/env bash
# Session 50, device call 1. On an H200: session 47's h200_call1.sh whole (the H200's AdamW BT 1024 winners against
# their serial_fills twins, the LM head's int8 BT 16384 and 4096^2 Lion BT 1024 twins; winners.csv comes back).
# Elsewhere: Nsight Compute on the LM head's AdamW int8 BT 16384 step with the H200's tall int8 row (session 49: 0.782x
# the cooperative-tall row on an H100, rounds spread over 9 ms), to set beside session 48's profile of the row
# (results/2026-12-06/session48/call10): L2 hit rate and DRAM bytes.
#   bash results/2026-12-06/session50/call1.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
REPLACES="kernel=gluon_tall,block_m=128,block_k=64,epilogue_stages=1" bash results/2026-12-06/session48/call9.sh
