#!/usr/bin/env bash
# Session 51, device call 5 (run inline on the card of call 4, this file written after it): the waits of call 4 on three
# more cells at BT >= 4096 against their committed rows (config_ab.py, REFERENCE=winner, five rounds, bits compared),
# after the VARY preflight on the card's rows.
#   bash results/2026-12-06/session51/call5.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
CHECK=1 REFERENCE=winner CELLS=12288x4096:16384,4096x12288:16384,151936x4096:4096 ARMS=adamw-bf16,adamw-int8 \
  VARY="wave_sync=150000;wave_sync=600000" python3 scripts/device/config_ab.py | tail -2
ab wave_bt16k 12288x4096:16384,4096x12288:16384,151936x4096:4096 adamw-bf16,adamw-int8 "wave_sync=150000;wave_sync=600000"
