#!/usr/bin/env bash
# Session 45, prepared for an H200 (not run: the session's machines were H100s): call 9's sweep (the ping-pong
# configs, first_fill_after 2 twins among them, 1024 x 4096 and 4096^2 at BT 512, every arm) on the H200, its
# winners written into this tree's winners.csv (`--winners`), then the acceptance grid on them. Brings back
# $OUT/winners.csv to commit (after `git diff` shows only those cells' H200 rows changed).
#   bash results/2026-12-06/session45/call10.sh     (device, repository root; writes $OUT; ~2 min sweep + 3 min grid)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
grep -q H200 "$OUT/card.txt" || { echo "not an H200: stopped"; exit 0; }
SWEEP_TIMEOUT=240 OUT=$OUT bash results/2026-12-06/session45/call9.sh
python3 -m forge_mcore.bench.kernel --winners "$OUT/sweep512/kernel.csv" && cp forge_mcore/kernels/winners.csv "$OUT/"
GRID_TIMEOUT=${GRID_TIMEOUT:-330} OUT=$OUT bash results/2026-12-01/session15/call4.sh
