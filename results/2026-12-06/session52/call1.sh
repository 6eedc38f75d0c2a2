#!/usr/bin/env bash
# Session 52, first call: on an H200 session 47's h200_call1.sh (its serial twins and the LM head / Lion twins,
# rows set, winners.csv back); on any other card the acceptance grid on the committed rows (session 51's
# wave_sync rows included), its card in card.txt.
#   bash results/2026-12-06/session52/call1.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
cp "$OUT/card.txt" /tmp/card.txt
GRID_TIMEOUT=${GRID_TIMEOUT:-480} bash results/2026-12-01/session15/call4.sh
cp /tmp/card.txt "$OUT/"
