#!/usr/bin/env bash
# Session 53, call 2 (run inline, this file written after): the acceptance grid again on call 1's card and rows,
# its card in the tarball.
#   bash results/2026-12-06/session53/call2.sh     (device, repository root; writes $OUT)
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > /tmp/card.txt
GRID_TIMEOUT=300 bash results/2026-12-01/session15/call4.sh
mkdir -p /tmp/c && cd /tmp/c && tar xzf "$OUT/call4.tgz" && cp /tmp/card.txt . && tar czf "$OUT/call4.tgz" .
