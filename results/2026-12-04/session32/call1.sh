#!/usr/bin/env bash
# Session 32, device call 1: signed int8 codes rounded half to even by one fma (tl_bits.rounded_low_byte;
# the int8 rule loop of the ws winners 1,133 -> 1,101 SASS instructions) against the committed package.
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive 09a5849 forge_mcore | tar -x -C ab_base
#   device call:            bash results/2026-12-04/session32/call1.sh
# code_ab.sh new/base/new2 on the int8 <= bf16 cells (each adamw-int8 cell times its bf16 twin rep by rep),
# then the int8 GPU tests outside test_gluon_kernel_every_rule.
set -u
OUT=${OUT:-/tmp/out}
ARGS="--shapes 4096x4096,12288x4096,4096x12288,151936x4096 --bts 1024,4096 --arms adamw-int8 --reps 30" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-170} bash scripts/device/code_ab.sh
SELECT="int8 and not gluon_kernel_every_rule" NAME=int8_other TIMEOUT=${TEST_TIMEOUT:-150} \
  bash results/2026-12-04/session31/call3.sh
(cd "$OUT" && tar czf /tmp/call1.tgz . && mv /tmp/call1.tgz "$OUT/")
