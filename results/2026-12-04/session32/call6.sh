#!/usr/bin/env bash
# Session 32, device call 6 (at b31dadc: AdamW's step size moved into its denominator, one multiply per element
# fewer in the bf16 and int8 rules): every Adam/AdamW GPU test (with the new lr-0 test on one config of each Gluon
# kernel), then code_ab.sh new/base/new2 against ee23743 on AdamW bf16 and int8 at BT 512/1024 on the five shapes.
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive ee23743 forge_mcore | tar -x -C ab_base
#   device call:            bash results/2026-12-04/session32/call6.sh
set -u
OUT=${OUT:-/tmp/out}
SELECT="adam" NAME=adam TIMEOUT=${TEST_TIMEOUT:-220} bash results/2026-12-04/session31/call3.sh
RATIO=adamw-int8/adamw-bf16 \
ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 512,1024 --arms adamw-bf16,adamw-int8 --reps 20" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-110} bash scripts/device/code_ab.sh
(cd "$OUT" && tar czf /tmp/call6.tgz . && mv /tmp/call6.tgz "$OUT/")
