#!/usr/bin/env bash
# For the next H200 (it stops at once on any other card), in one call (~6 minutes of A/Bs by their scripts'
# estimates, then a grid): the twins of the H200's rows where an H100 found them faster, each row set where its
# twin won (session 47's h200_call1.sh with TWINS_ONLY=1: the LM head's AdamW int8 at BT 16384 on the
# cooperative-tall config, 4096^2 Lion at BT 1024 on the tall config;
# session 46's h200.sh with PARTS=after: 1024 x 4096 and 4096^2 at BT 512 with first_fill_after=2), then the
# acceptance grid on the rows that result, in the time left (the LM head's cells run last). Everything comes back
# in $OUT/call4.tgz: winners.csv (commit it), twins.tgz and logs.tgz (the A/Bs), grid/ (count it with --acceptance
# and keep a first_fill_after row only where its grid cell beats session 56's, results/2026-12-07/session56/).
# The serial_fills twins of AdamW BT 1024 (PARTS=serial bash results/2026-12-06/session46/h200.sh, ~4 min) are the
# call after.
#   bash results/2026-12-07/session56/h200_next.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card_uuid.txt"
grep -q H200 "$OUT/card_uuid.txt" || { echo "not an H200: stopped"; exit 0; }
TWINS_ONLY=1 bash results/2026-12-06/session47/h200_call1.sh
PARTS=after bash results/2026-12-06/session46/h200.sh
echo "twins done at ${SECONDS} s"
left=$(( ${CALL_LIMIT:-590} - SECONDS ))  # timeout 0 would mean no limit at all
if [ "$left" -ge 90 ]; then GRID_TIMEOUT=$left bash results/2026-12-01/session15/call4.sh
else echo "${left} s left: no grid in this call"; fi
