#!/usr/bin/env bash
# Prepared in session 29, not run: if call 1 holds, the int8 configs of the tall and cooperative kernels swept
# where int8 misses (BT >= 4096, and the LM head at BT 1024, whose int8 winner is a ping-pong config while bf16's
# is tall: int8's tall kernels spilled), then `python -m forge_mcore.bench.kernel --winners <dir>/sweep/kernel.csv`
# locally and the grid (results/2026-12-01/session15/call4.sh) in a later call.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout ${SWEEP_TIMEOUT:-400} python3 -m forge_mcore.bench.kernel --out "$OUT/sweep" \
  --shapes 4096x4096,4096x12288,1024x4096,151936x4096 --bts 1024,4096,16384 --arms adamw-int8 --reps 20 \
  --sweep --sweep-configs all --sweep-kernels gluon_ws,gluon_tall,gluon_coop,gluon_coop_tall > "$OUT/sweep.log" 2>&1
echo "sweep rc $?"; rm -f "$OUT"/sweep/*.png
cd "$OUT" && tar czf /tmp/sweep.tgz sweep sweep.log && rm -rf sweep sweep.log && mv /tmp/sweep.tgz "$OUT/"
