#!/usr/bin/env bash
# Session 33, device call 2: int8 codes in fragment order (this tree; the ws int8 rule loop 1,039 -> 991 SASS
# instructions) against the package before it, in alternating runs (scripts/device/code_ab.sh: new / base / new2).
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive 2f9f0c7 forge_mcore | tar -x -C ab_base
#   device call:            bash results/2026-12-04/session33/call2.sh
# Each adamw-int8 cell times its adamw-bf16 twin rep by rep (the int8 <= bf16 target).
set -u
OUT=${OUT:-/tmp/out}
TREES="base:ab_base" \
ARGS="--shapes 4096x4096,12288x4096,4096x12288,151936x4096,1024x4096 --bts 512,1024 --arms adamw-int8 --reps 20" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-170} bash scripts/device/code_ab.sh
(cd "$OUT" && tar czf /tmp/call2.tgz . && mv /tmp/call2.tgz "$OUT/")
