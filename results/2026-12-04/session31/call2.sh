#!/usr/bin/env bash
# Session 31, device call 2: does instruction issue fall off a cliff when a loop body outgrows an
# instruction cache (scripts/device/icache_probe.py: a runtime loop of N independent fma's, N from 256 to
# 3,072, one and two warps per scheduler), and how much of the int8 rule's time is instruction fetch
# today (Nsight's per-SASS stall samples of the AdamW int8 step and its bf16 twin at 4096², BT 1024).
#   bash results/2026-12-04/session31/call2.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
OUT=$OUT timeout 240 python3 scripts/device/icache_probe.py > "$OUT/icache_probe.log" 2>&1
echo "probe rc $?"; cat "$OUT/icache_probe.log" | cut -c1-200
CELLS="4096x4096:1024:adamw-int8 4096x4096:1024:adamw-bf16" GLUON_FLAGS=1 SOURCE=1 NCU_TIMEOUT=150 OUT=$OUT \
  bash scripts/device/ncu_kernel.sh
cd "$OUT" && tar czf /tmp/call2.tgz . && rm -rf "$OUT"/* && mv /tmp/call2.tgz "$OUT/"
