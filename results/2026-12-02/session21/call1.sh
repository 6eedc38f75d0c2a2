#!/usr/bin/env bash
# Session 21 call 1: the tile order (TileConfig.group_m, 8 in every committed config and never swept)
# on the BT <= 1024 cells. Per cell and arm, the committed winner against itself with group_m 4, 16,
# 32 and 1024 (1024: column-major, every row tile of a column before the next column), bits first
# (scripts/device/config_ab.py, VARY). Ran as an inline copy of what is now
# scripts/device/config_ab_jobs.sh, with VARY=group_m=4,16,32,1024 (config_ab.py's first syntax, the
# same arms); the same run today:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"
export REFERENCE=winner VARY="group_m=4;group_m=16;group_m=32;group_m=1024" ROUNDS=3
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024:adamw-bf16,lion-bf16,sgdm-bf16
12288x4096:1024,4096x12288:1024,151936x4096:1024:adamw-bf16" OUT=$OUT bash scripts/device/config_ab_jobs.sh
