#!/usr/bin/env bash
# Session 45, device call 6: the GPU tests of the first_fill_after configs (parity, poisoned tiles, every rule
# and codec, traced steps, every tile config; and a first fill asking for more slabs than its program has);
# then, on an H200 only, call 5 (the 1024 x 4096 BT 512 A/B and the acceptance grid).
#   bash results/2026-12-06/session45/call6.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
SELECT="after2 or first_fill" TIMEOUT=300 WORKERS=8 OUT=$OUT bash scripts/device/gluon_tests.sh
grep -c PASSED "$OUT/tests.log"; grep -E "passed|failed" "$OUT/tests.log" | tail -1
if grep -q H200 "$OUT/card.txt"; then OUT=$OUT bash results/2026-12-06/session45/call5.sh; fi
