#!/usr/bin/env bash
# Session 23 call 4 (the working tree after 3df854e: TileConfig.tile_fill "lsu", the tile producer's
# cp.async fills): its GPU tests (the three lsu candidates, the back-to-back test), then each BT <= 1024
# winner against itself with tile_fill=lsu, bits first (scripts/device/config_ab.py VARY).
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 200 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "lsu or back_to_back" -n 8 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 2 "$OUT/tests.log"
grep FAILED "$OUT/tests.log" | head -5
export REFERENCE=winner VARY="tile_fill=lsu" ROUNDS=3
JOBS="1024x4096:512,1024x4096:1024,4096x4096:512,4096x4096:1024:adamw-bf16,sgdm-bf16,lion-bf16,adamw-int8
12288x4096:1024,4096x12288:1024:adamw-bf16" JOB_TIMEOUT=200 OUT=$OUT bash scripts/device/config_ab_jobs.sh
