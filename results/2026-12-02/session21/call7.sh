#!/usr/bin/env bash
# Session 21 call 7: ping-pong with three tile buffers in rotation (TileConfig.epilogue_stages 3 on
# gluon_ws, configs.CANDIDATES): call 6 showed the tile fills and stores costing the step far more
# than their bytes at HBM speed, and a buffer per consumer lets one fill per consumer be in flight,
# issued only as its consumer starts the unit. Every Gluon GPU test (the consumer's buffer and barrier
# indices became runtime values for every config), then per BT <= 1024 cell and arm the committed
# winner against three rotating buffers (bits first). As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/tests" "$OUT/adamw" "$OUT/four_bytes"
OUT=$OUT/tests TIMEOUT=250 bash scripts/device/gluon_tests.sh
WS="kernel=gluon_ws,block_m=64,epilogue_stages=3"
export REFERENCE=winner ROUNDS=3
VARY="$WS,num_stages=3;$WS,block_k=32,num_stages=6" JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:1024:adamw-bf16" \
  OUT=$OUT/adamw JOB_TIMEOUT=150 bash scripts/device/config_ab_jobs.sh
VARY="$WS,num_stages=5;$WS,block_k=32,num_stages=8" JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024:sgdm-bf16,lion-bf16,adamw-int8" \
  OUT=$OUT/four_bytes JOB_TIMEOUT=150 bash scripts/device/config_ab_jobs.sh
