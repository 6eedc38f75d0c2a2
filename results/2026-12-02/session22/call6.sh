#!/usr/bin/env bash
# Session 22 call 6: per-consumer phase timelines (forge_mcore.bench.timeline) of the step and its OOB twin
# (call4/oob_tiles.patch applied to the working tree), three AdamW bf16 cells.
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
timeout 300 python3 results/2026-12-02/session22/call6/timeline_oob.py $OUT \
  4096x4096:512:adamw-bf16,4096x4096:1024:adamw-bf16,1024x4096:512:adamw-bf16,4096x4096:512:sgdm-bf16 2>&1 | grep -v Warn
