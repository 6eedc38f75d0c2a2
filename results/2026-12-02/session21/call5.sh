#!/usr/bin/env bash
# Session 21 call 5: what the rule itself costs inside the step (scripts/device/rule_cost.py: the
# committed winner with a finite gradient, with a NaN one that skips every tile's rule but moves the
# same tile bytes, and its main loop alone, interleaved). One process per arm compiles first (REPS=1,
# output dropped), then the timed run. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
export CELLS=4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:1024,4096x4096:4096
mkdir -p /tmp/warm
for arm in adamw-bf16 sgdm-bf16 lion-bf16 adamw-int8; do
  ARMS=$arm REPS=1 OUT=/tmp/warm timeout 300 python3 scripts/device/rule_cost.py > /dev/null 2>&1 &
done
wait
ARMS=adamw-bf16,sgdm-bf16,lion-bf16,adamw-int8 timeout 400 python3 scripts/device/rule_cost.py 2>&1 | grep -v Warn
