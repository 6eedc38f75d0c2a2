#!/usr/bin/env bash
# Session 53, call 3: is the LM head's int8 at BT 16384 (0.965-0.967 of bf16 in calls 1-2, though 1.011x in
# call 1's config_ab rounds) held back by the board's power cap? clock_probe.py: the SM clock and power while
# the int8 step, the bf16 step, int8's main loop alone and cuBLAS each replay back to back (2 s windows, twice).
#   bash results/2026-12-06/session53/call3.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
CELLS="151936x4096:16384:adamw-bf16+adamw-int8+mainloop:adamw-int8+cublas" timeout 240 \
  python3 scripts/device/clock_probe.py 2>&1 | tee "$OUT/clock_probe.log" | tail -n 12
