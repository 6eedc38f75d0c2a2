#!/usr/bin/env bash
# Session 47, device call 5 (an H100): the decay probe on the tall config at the LM head and 4096^2, BT 1024 (call 4's
# grid: Lion on the LM head at BT 1024 10.8% slower than SGD-m on the same tall config, at 4096^2 4.3%).
#   bash results/2026-12-06/session47/call5.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv -lms 100 > "$OUT/smi.csv" &
SMI=$!
CELLS=151936x4096:1024,4096x4096:1024 CONFIGS=tall timeout 300 python3 results/2026-12-06/session47/decay_probe.py 2>&1 | tee "$OUT/decay_probe.log"
kill $SMI
