#!/usr/bin/env bash
# Session 30, device call 4: the bf16 arms' configs re-swept at BT <= 1024 on the code after session 29's
# fewer-instruction rule (the winners there came from sweeps before it), the winners written from the sweep
# on the device (kernels/winners.csv, copied back into $OUT), then the acceptance grid on them, one call.
#   bash results/2026-12-04/session30/call4.sh   (the device; then `--winners` locally from sweep/kernel.csv)
# (The sweep and its winners as scripts/device/sweep_winners.sh runs them; the call ran the same commands inline.)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SHAPES=4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 BTS=512,1024 ARMS=adamw-bf16,sgdm-bf16,lion-bf16 \
  KERNELS=gluon_ws,gluon_tall,gluon_coop,gluon_coop_tall NAME=sweep TIMEOUT=${SWEEP_TIMEOUT:-280} \
  OUT=$OUT bash scripts/device/sweep_winners.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-280} OUT=$OUT bash results/2026-12-01/session15/call4.sh
