#!/usr/bin/env bash
# Session 22, call 3: scripts/device/fixed_cost.py over three shapes, AdamW bf16 and SGD-m, each on
# its BT-512 and its BT-1024 winner (BT 64 beside it: the step with next to no main loop), with a
# plain copy of the weight and state bytes: how much of each step is tile traffic that streams
# slower than a copy, and how much is main loop that does not overlap it.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
for shape in 1024x4096 4096x4096 12288x4096; do
  for arm in adamw-bf16 sgdm-bf16; do
    for base in 512 1024; do
      d=$OUT/${shape}_${arm}_$base; mkdir -p $d
      echo "== $shape $arm winner of BT $base"
      SHAPE=$shape ARM=$arm BASE_BT=$base BTS=64,$base OUT=$d timeout 120 python3 scripts/device/fixed_cost.py 2>&1 | tail -n 5
    done
  done
done
