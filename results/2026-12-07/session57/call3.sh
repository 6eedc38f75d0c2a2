#!/usr/bin/env bash
# Session 57, for an H200 with ~500 s of budget (it stops at once on any other card): call4.sh's two twins (the
# twins of session 56's h200_next.sh without its first_fill_after part; each row set where its twin won, winners.csv
# in $OUT after each), then the acceptance grid on the rows that result in the time left ($OUT/call4.tgz).
#   CALL_LIMIT=<the run's limit_s - 10> bash results/2026-12-07/session57/call3.sh     (device, repository root)
set -u
OUT=${OUT:-/tmp/out}
bash results/2026-12-07/session57/call4.sh
grep -q H200 "$OUT/card_uuid.txt" || exit 0
left=$(( ${CALL_LIMIT:-590} - SECONDS ))
echo "twins done at ${SECONDS} s; ${left} s left"
if [ "$left" -ge 90 ]; then GRID_TIMEOUT=$left bash results/2026-12-01/session15/call4.sh
else echo "no grid in this call"; fi
