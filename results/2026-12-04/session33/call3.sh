#!/usr/bin/env bash
# Session 33's plan, device call 3 (after call 1's tests pass and call 2 shows the fragment-order codes faster):
# every ws / tall / cooperative Gluon config swept for AdamW int8 at BT 512/1024 on the LM head, 12288 x 4096 and
# 4096^2 (the int8 rule is shorter on tall tiles too, and the LM head's bf16 winner is tall), the winners written
# on the device (copy $OUT/winners.csv to forge_mcore/kernels/winners.csv), then the grid on them.
#   bash results/2026-12-04/session33/call3.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SHAPES=151936x4096,12288x4096,4096x4096 BTS=512,1024 ARMS=adamw-int8 KERNELS=gluon_ws,gluon_tall,gluon_coop \
  NAME=sweep TIMEOUT=${SWEEP_TIMEOUT:-230} OUT=$OUT bash scripts/device/sweep_winners.sh
GRID_TIMEOUT=${GRID_TIMEOUT:-300} OUT=$OUT bash results/2026-12-01/session15/call4.sh
(cd "$OUT" && tar czf /tmp/call3.tgz . && mv /tmp/call3.tgz "$OUT/")
