#!/usr/bin/env bash
# Session 29 call 4 (at the call 2/3 tree): call 3's grid read the LM head's int8 cells at BT 1024 and 16384 6-7% slower
# than session 28's grid (cells calls 1-2 did not A/B): this tree
# against session 28's package (ab_base = git archive 6d88daf forge_mcore) in alternating runs on one device
# (scripts/device/code_ab.sh new/base/new2).
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive 6d88daf forge_mcore | tar -x -C ab_base
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
mkdir -p $OUT/lm
ARGS="--shapes 151936x4096 --bts 1024,16384 --arms adamw-int8 --reps 10" RUN_TIMEOUT=100 \
  OUT=$OUT/lm bash scripts/device/code_ab.sh
