#!/usr/bin/env bash
# Session 47, device call 4: on an H200 h200_call1.sh; elsewhere the card's identity, then the acceptance grid on
# this tree's winners (session 15's call4.sh: 5 shapes x 4 BTs x 4 arms, one process, everything tarred in $OUT).
#   bash results/2026-12-06/session47/call4.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
GRID_TIMEOUT=400 OUT=$OUT bash results/2026-12-01/session15/call4.sh
