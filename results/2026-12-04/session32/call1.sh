#!/usr/bin/env bash
# Session 32, device call 1: fewer int8 rule instructions by rounding codes with one fma (round half to even,
# tl_bits.rounded_low_byte), against the committed package, in alternating runs (scripts/device/code_ab.sh):
#   new  = the working tree: signed codes by one fma, and nonnegative ones too, lifted to at least one step in any
#          block that is not flushed (the ws winners' int8 rule loop 1,133 -> 1,039 SASS instructions)
#   base = 09a5849 (session 31's package);  rne = 679c594 (signed codes only: 1,101)
#   local, before the call: rm -rf ab_base ab_rne && mkdir ab_base ab_rne
#                           git archive 09a5849 forge_mcore | tar -x -C ab_base; git archive 679c594 forge_mcore | tar -x -C ab_rne
#   device call:            bash results/2026-12-04/session32/call1.sh
# Each adamw-int8 cell times its adamw-bf16 twin rep by rep (the int8 <= bf16 target).
set -u
OUT=${OUT:-/tmp/out}
TREES="base:ab_base rne:ab_rne" \
ARGS="--shapes 4096x4096,12288x4096,4096x12288,151936x4096 --bts 1024,4096 --arms adamw-int8 --reps 20" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-125} bash scripts/device/code_ab.sh
(cd "$OUT" && tar czf /tmp/call1.tgz . && mv /tmp/call1.tgz "$OUT/")
