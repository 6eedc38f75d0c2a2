#!/usr/bin/env bash
# For the session after 22, a first device call (not run): where a small cell's step time goes outside
# its SMs' busy spans (next/tail_probe.py, global-timer stamps). Locally first:
#   git apply results/2026-12-02/session22/next/globaltimer.patch     (revert it before committing)
# then, as a device call:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
timeout 300 python3 results/2026-12-02/session22/next/tail_probe.py $OUT \
  1024x4096:512:adamw-bf16,1024x4096:1024:adamw-bf16,1024x4096:512:sgdm-bf16,1024x4096:1024:sgdm-bf16,4096x4096:512:adamw-bf16 \
  2>&1 | grep -v Warn
