#!/usr/bin/env bash
# Session 46, device call 2: on an H200, session 45's call11 (the twins, then the grid); on anything else the
# rule probe (Lion against SGD-m on one tile config, 4096^2 and 1024 x 4096 at BT 1024) with the card's SM clock
# and power sampled beside it.
#   bash results/2026-12-06/session46/call2.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session46/h200_or_h100.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv -lms 200 > "$OUT/smi.csv" &
SMI=$!
CELLS=4096x4096:1024,1024x4096:1024 timeout 400 python3 results/2026-12-06/session46/rule_probe.py 2>&1 | tee "$OUT/rule_probe.log"
kill $SMI
