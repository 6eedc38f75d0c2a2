#!/usr/bin/env bash
# Session 26, call 3: does the ring's depth move the BT <= 1024 ping-pong step? (session 25's Nsight
# samples: consumers wait on slab data with the ring's stages in flight). Each committed winner
# against itself with 3/4/6 stages (6 fits beside two plain 2-state tile buffers, not AdamW's three);
# configs that do not fit fall back to the Triton kernel, their bits differ and they are not timed.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 REFERENCE=winner ROUNDS=3
mkdir -p $OUT/light $OUT/adamw
JOBS=$'1024x4096:512,4096x4096:512:sgdm-bf16,lion-bf16' \
  VARY="num_stages=4;num_stages=6" \
  OUT=$OUT/light bash scripts/device/config_ab_jobs.sh 2>&1 | tail -n 30
JOBS=$'1024x4096:512,1024x4096:1024,4096x4096:512,4096x4096:1024:adamw-bf16' \
  VARY="num_stages=3;num_stages=4" \
  OUT=$OUT/adamw bash scripts/device/config_ab_jobs.sh 2>&1 | tail -n 30
