#!/usr/bin/env bash
# Session 29 call 1 (at the commit after 6d88daf: bf16 pairs widened by one shift and one mask, the guard's sum
# of squares per column half; fewer epilogue instructions, the same weight and state bits by construction):
# two AdamW steps' bits (bf16, int8 states) against the package before (ab_base = git archive 6d88daf forge_mcore),
# then the step against it on the BT <= 1024 misses (scripts/device/code_ab.sh: new, base, new2).
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive 6d88daf forge_mcore | tar -x -C ab_base
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
steps=scripts/device/step_bits.py
{ timeout 100 python3 $steps save ab_base /tmp/bits_base.pt && timeout 100 python3 $steps save . /tmp/bits_new.pt \
  && timeout 60 python3 $steps compare /tmp/bits_base.pt /tmp/bits_new.pt; } > "$OUT/bits.log" 2>&1
echo "bits rc $?"; tail -n 5 "$OUT/bits.log" | cut -c1-120
ARGS="--shapes 4096x4096,1024x4096,4096x12288 --bts 512,1024 --arms adamw-bf16,lion-bf16,sgdm-bf16,adamw-int8 --reps 20" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-150} bash scripts/device/code_ab.sh
