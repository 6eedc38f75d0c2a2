#!/usr/bin/env bash
# Session 25 call 4 (call 2's tree): which of the codec's two fast divisions costs the int8 step its 1-5% at BT >= 1024
# (call 3) and which buys the 4-8% at BT 512 (call 1): this tree (both), ab_base (git archive 3a57a71: neither),
# ab_scale (only x / Q fast), ab_inv (only Q / x fast); scripts/device/code_ab.sh, runs alternating.
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
ARGS="--shapes 4096x4096,12288x4096 --bts 512,1024,4096 --arms adamw-int8 --reps 30" TREES="base:ab_base scale:ab_scale inv:ab_inv" \
  RUN_TIMEOUT=100 RATIO=adamw-int8/adamw-int8 bash scripts/device/code_ab.sh
