#!/usr/bin/env bash
# Session 23 call 3 (f2d4e32 + results/2026-12-02/session22/next/globaltimer.patch, its conflict with the
# PDL wait resolved: the entry stamp after the wait): session 22's prepared next/call1.sh, the
# tail probe (global-timer stamps; the SMs' ends at p10/p50/p90/max and by unit count).
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
timeout 300 python3 results/2026-12-02/session22/next/tail_probe.py $OUT \
  1024x4096:512:adamw-bf16,1024x4096:1024:adamw-bf16,1024x4096:512:sgdm-bf16,1024x4096:1024:sgdm-bf16,4096x4096:512:adamw-bf16 \
  2>&1 | grep -v Warn
