#!/usr/bin/env bash
# Session 30, device call 4: the bf16 arms' configs re-swept at BT <= 1024 on the code after session 29's
# fewer-instruction rule (the winners there came from sweeps before it), the winners written from the sweep
# on the device (kernels/winners.csv, copied back into $OUT), then the acceptance grid on them, one call.
#   bash results/2026-12-04/session30/call4.sh   (the device; then `--winners` locally from sweep/kernel.csv)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout ${SWEEP_TIMEOUT:-280} python3 -m forge_mcore.bench.kernel --out "$OUT/sweep" \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 512,1024 \
  --arms adamw-bf16,sgdm-bf16,lion-bf16 --reps 20 --sweep --sweep-configs all \
  --sweep-kernels gluon_ws,gluon_tall,gluon_coop,gluon_coop_tall > "$OUT/sweep.log" 2>&1
echo "sweep rc $?"; rm -f "$OUT"/sweep/*.png
python3 -m forge_mcore.bench.kernel --winners "$OUT/sweep/kernel.csv" && cp forge_mcore/kernels/winners.csv "$OUT/"
GRID_TIMEOUT=${GRID_TIMEOUT:-280} OUT=$OUT bash results/2026-12-01/session15/call4.sh
