#!/usr/bin/env bash
# Session 25 call 5 (the fast divisions as a TileConfig field, fast_division, with one ping-pong config in CONFIGS;
# every other config back on div_rn): the division tests and the new config's GPU tests; a sweep of the ping-pong
# configs for int8 at BT 512 on the five shapes, the winners rewritten from it
# (python -m forge_mcore.bench.kernel --winners: only the swept cells), then the acceptance grid on them.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 120 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -k "fastdiv or division" \
  -n 8 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 \
  --bts 512 --arms adamw-int8 --sweep --sweep-kernels gluon_ws > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
python3 -m forge_mcore.bench.kernel --winners $OUT/sweep/kernel.csv; cp forge_mcore/kernels/winners.csv $OUT/
git diff --stat forge_mcore/kernels/winners.csv
GRID_TIMEOUT=260 bash results/2026-12-01/session15/call4.sh
