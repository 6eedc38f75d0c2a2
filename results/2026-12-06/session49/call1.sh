#!/usr/bin/env bash
# Session 49, device call 1: session 48's next_lm16k.sh under a device budget cut by eight machine starts that
# failed (about 1,000 s of 1,800 spent on them): the LM head's AdamW int8 BT 16384 row against group_m 4 and 16
# and the H200's tall int8 row (config_ab.py), then Nsight on the tall row only if PROFILE_BY seconds remain
# from the call's start. On an H200 session 47's h200_call1.sh with TWINS_ONLY=1 runs instead.
#   PROFILE_BY=300 bash results/2026-12-06/session49/call1.sh     (device, repository root; writes $OUT)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
TALL="kernel=gluon_tall,block_m=128,block_k=64,epilogue_stages=1"  # the H200's int8 row there
ab order 151936x4096:16384 adamw-int8 "group_m=4;group_m=16;$TALL"
if [ "$SECONDS" -lt "${PROFILE_BY:-300}" ]; then
  REPLACES="$TALL" bash results/2026-12-06/session48/call9.sh
else
  echo "== no profile: $SECONDS s gone"
fi
