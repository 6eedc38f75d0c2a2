#!/usr/bin/env bash
# Session 57, for an H200 with ~500 s of budget (it stops at once on any other card): session 56's h200_next.sh
# without its first_fill_after part — the two twins an H100 found faster (TWINS_ONLY=1 h200_call1.sh: the LM head's
# AdamW int8 BT 16384 on cooperative-tall, 4096^2 Lion BT 1024 on tall), each row set where its twin won, then the
# acceptance grid on the rows that result in the time left. Everything in $OUT/call4.tgz (winners.csv: commit it).
#   CALL_LIMIT=<the run's limit_s - 10> bash results/2026-12-07/session57/call3.sh     (device, repository root)
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card_uuid.txt"
grep -q H200 "$OUT/card_uuid.txt" || { echo "not an H200: stopped"; exit 0; }
TWINS_ONLY=1 bash results/2026-12-06/session47/h200_call1.sh
left=$(( ${CALL_LIMIT:-590} - SECONDS ))
echo "twins done at ${SECONDS} s; ${left} s left"
if [ "$left" -ge 90 ]; then GRID_TIMEOUT=$left bash results/2026-12-01/session15/call4.sh
else echo "no grid in this call"; fi
