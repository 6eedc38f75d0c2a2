#!/usr/bin/env bash
# Session 25 call 3 (call 2's tree): the int8 step with the codec's fast divisions against the package before them
# (ab_base = git archive 3a57a71 forge_mcore) at BT 1024 and 4096 -- the cells where call 2's grid read int8 slower
# than session 23's grid (another call: drift or the change?) -- scripts/device/code_ab.sh new/base/new2.
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
ARGS="--shapes 4096x4096,12288x4096,4096x12288,151936x4096 --bts 1024,4096 --arms adamw-int8 --reps 30" \
  RUN_TIMEOUT=150 RATIO=adamw-int8/adamw-int8 bash scripts/device/code_ab.sh
