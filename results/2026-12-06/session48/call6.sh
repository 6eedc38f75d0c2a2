#!/usr/bin/env bash
# Session 48, device call 6: on an H200 session 47's h200_call1.sh with TWINS_ONLY=1; elsewhere the card's identity,
# then the LM head's AdamW int8 BT 16384 row (cooperative tall) against its twin with the int8 codec's fast
# divisions (call 5: int8 takes ~5% more cycles per step than bf16 at the same
# power, so its rule's instructions, not the clock, hold it).
#   bash results/2026-12-06/session48/call6.sh     (device, repository root; writes $OUT)
#   VARY6="num_stages=4;num_stages=6" bash results/2026-12-06/session48/call6.sh     (call 7: the ring depth)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
ab lm16k_int8 151936x4096:16384 adamw-int8 "${VARY6:-fast_division=True}"
