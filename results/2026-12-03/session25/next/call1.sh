#!/usr/bin/env bash
# Prepared in session 25, not run: (1) the 4096² int8 BT 512 cell re-swept over the ping-pong configs (call 5's
# --winners kept its config without the fast divisions on 74.35 against 74.5 us, where the same config's own
# sweep row read 78.7 and three calls had the fast one 1.06x ahead), the winners rewritten from it; (2) SM clock
# and power windows of the int8 step with and without the fast divisions where they cost time (tall, BT 4096)
# and where they gain (ping-pong, BT 512): does the faster rule lower the clock (power) or take more cycles?
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 120 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 4096x4096 --bts 512 --arms adamw-int8 \
  --sweep --sweep-kernels gluon_ws > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
python3 -m forge_mcore.bench.kernel --winners $OUT/sweep/kernel.csv; cp forge_mcore/kernels/winners.csv $OUT/
git diff --stat forge_mcore/kernels/winners.csv
CELLS="4096x4096:4096:adamw-int8+adamw-int8@fast_division=True+sleep;4096x4096:512:adamw-int8@fast_division=True+adamw-int8@fast_division=False" \
  timeout 200 python3 scripts/device/clock_probe.py > $OUT/clock_probe.log 2>&1
echo "clock_probe rc $?"; tail -n 12 $OUT/clock_probe.log
