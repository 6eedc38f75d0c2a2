#!/usr/bin/env bash
# Session 49, device call 2 (run as the one line below, on call 1's warm H100; kept here as a script): the LM head's
# AdamW int8 BT 16384 row against group_m 2, 4 and 6, and the bf16 step's config against group_m 2 and 4.
#   bash results/2026-12-06/session49/call2.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab int8_order 151936x4096:16384 adamw-int8 "group_m=4;group_m=2;group_m=6"
ab bf16_order 151936x4096:16384 adamw-bf16 "group_m=4;group_m=2"
