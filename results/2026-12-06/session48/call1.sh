#!/usr/bin/env bash
# Session 48, device call 1: on an H200 session 47's h200_call1.sh (serial twins, the LM head's int8 BT 16384 and
# Lion 4096^2 BT 1024 against their twins, rows set, winners.csv back); elsewhere the card's identity, then the
# acceptance grid on this tree's winners -- the first grid whose Lion baselines compile per cell, hence the longer
# limit (session 15's call4.sh: 5 shapes x 4 BTs x 4 arms, one process, everything tarred in $OUT).
#   bash results/2026-12-06/session48/call1.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
GRID_TIMEOUT=540 OUT=$OUT bash results/2026-12-01/session15/call4.sh
