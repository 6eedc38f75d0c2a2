#!/usr/bin/env bash
# Session 23 call 1: the Gluon kernel launched as a programmatic dependent launch (PDL).
# Checks (Gluon GPU tests with the new back-to-back test; the bits of two AdamW steps against the
# package before PDL), then the ten missing BT <= 1024 cells' shapes, this tree / base / this tree.
#   local: rm -rf ab_base && mkdir ab_base && git archive a60a55e forge_mcore | tar -x -C ab_base
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/out}
TREE=. BASE=ab_base TEST_TIMEOUT=210 OUT=$OUT bash scripts/device/check_tree.sh
RUN_TIMEOUT=110 ARGS="--shapes 1024x4096,4096x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,lion-bf16,adamw-int8 --reps 30" \
  RATIO=adamw-int8/adamw-bf16 OUT=$OUT bash scripts/device/code_ab.sh
