#!/usr/bin/env bash
# Session 24 call 1 (the working tree after bdc729e: a tall unit's two int8 passes as one runtime loop over its
# four quarters, one copy of the int8 rule per consumer): the int8 GPU tests on the tall and cooperative tall
# configs and the poisoned-tile test (now also int8, its NaN in a tall unit's second pass), then each int8 AdamW
# winner against three tall configs with int8 states (scripts/device/config_ab.py VARY, bits first).
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 200 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "tall and (int8 or poisoned or traced)" -n 8 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 2 "$OUT/tests.log"
grep FAILED "$OUT/tests.log" | head -5
export REFERENCE=winner ROUNDS=3
export VARY="block_m=128,kernel=gluon_tall,epilogue_stages=1,num_stages=5;block_m=128,kernel=gluon_tall,epilogue_stages=1,num_stages=6;block_m=128,kernel=gluon_tall,epilogue_stages=2,num_stages=4,tile_fill=tma"
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024:adamw-int8
12288x4096:512,12288x4096:1024,4096x12288:512,4096x12288:1024,4096x4096:4096,12288x4096:4096:adamw-int8
151936x4096:512,151936x4096:1024:adamw-int8" WARM_TIMEOUT=200 JOB_TIMEOUT=150 OUT=$OUT bash scripts/device/config_ab_jobs.sh
