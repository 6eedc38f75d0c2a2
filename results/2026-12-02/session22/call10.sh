#!/usr/bin/env bash
# Session 22 call 10: next/tail_probe.py as of 9bbf4ef (`git show 9bbf4ef:results/2026-12-02/session22/next/tail_probe.py`;
# extended with per-SM end percentiles after this call, that version not run) with next/globaltimer.patch
# applied to the working tree (reverted before committing): the step's time outside its SMs' spans, on
# global-timer stamps. As run (the script at 9bbf4ef), from the repository root:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
timeout 300 python3 results/2026-12-02/session22/next/tail_probe.py $OUT \
  1024x4096:512:adamw-bf16,1024x4096:1024:adamw-bf16,1024x4096:512:sgdm-bf16,1024x4096:1024:sgdm-bf16,4096x4096:512:adamw-bf16 \
  2>&1 | grep -v Warn
