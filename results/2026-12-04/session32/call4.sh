#!/usr/bin/env bash
# Session 32, device call 4 (at 5c22239 + this script): every tall / cooperative / cooperative-tall Gluon config swept
# for AdamW int8 at BT 4096/16384 on the LM head and 12288 x 4096 with the new int8 codes (the LM head's BT 16384
# int8 cell was call 3's last BT >= 4096 miss), the winners written on the device, then the grid on them.
#   bash results/2026-12-04/session32/call4.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SHAPES=151936x4096,12288x4096 BTS=4096,16384 ARMS=adamw-int8 KERNELS=gluon_tall,gluon_coop,gluon_coop_tall \
  NAME=sweep TIMEOUT=${SWEEP_TIMEOUT:-230} OUT=$OUT bash scripts/device/sweep_winners.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-300} OUT=$OUT bash results/2026-12-01/session15/call4.sh
