#!/usr/bin/env bash
# Session 32, device call 2 (at 840417d, the int8 codes of call 1's "new" tree): every int8 GPU test of
# test_kernel_gpu.py (406), then every Gluon config swept for AdamW int8 at BT 512/1024 on the three shapes
# whose int8 cells sat near 0.97 of bf16, the winners written on the device (scripts/device/sweep_winners.sh).
#   bash results/2026-12-04/session32/call2.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SELECT="int8" NAME=int8 TIMEOUT=${TEST_TIMEOUT:-280} bash results/2026-12-04/session31/call3.sh
SHAPES=4096x4096,12288x4096,151936x4096 BTS=512,1024 ARMS=adamw-int8 KERNELS=gluon_ws,gluon_tall,gluon_coop \
  NAME=sweep TIMEOUT=${SWEEP_TIMEOUT:-220} OUT=$OUT bash scripts/device/sweep_winners.sh
(cd "$OUT" && tar czf /tmp/call2.tgz . && mv /tmp/call2.tgz "$OUT/")
