#!/usr/bin/env bash
# Session 46, device call 7: the GPU tests of the serial_fills configs (parity, poisoned tiles, every rule and codec,
# traced steps, every tile config); then, on an H200 only, session 45's call11 (the twins, then the grid).
#   bash results/2026-12-06/session46/call7.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
SELECT="serial and not accumulated" TIMEOUT=300 WORKERS=8 OUT=$OUT bash scripts/device/gluon_tests.sh
grep -c PASSED "$OUT/tests.log"; grep -E "passed|failed" "$OUT/tests.log" | tail -1
if grep -q H200 "$OUT/card.txt"; then OUT=$OUT bash results/2026-12-06/session45/call11.sh; fi
