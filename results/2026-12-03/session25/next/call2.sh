#!/usr/bin/env bash
# Prepared in session 25, not run: the tile producer's cp.async fills from two warps (next/lsu_two_warps.patch:
# the consumers at 224 registers; offline, the lsu AdamW bf16 ping-pong kernel 5,952 -> 5,040 SASS instructions
# and its 64 B of stack gone). Session 25's try counts had the consumers retrying their tile's barrier ~455 times
# per warp at 1024 x 4096 BT 512, where the lsu configs win.
#   local, before the call:  rm -rf ab_base && mkdir ab_base && git archive HEAD forge_mcore | tar -x -C ab_base
# On the device the patch is applied to the working tree's copy (new, new2), ab_base is the committed package.
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
(git apply results/2026-12-03/session25/next/lsu_two_warps.patch 2>/dev/null \
  || patch -p1 < results/2026-12-03/session25/next/lsu_two_warps.patch) && echo "patch applied"
timeout 150 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 8 \
  -k "lsu and (parity or poisoned or every_rule or traced)" > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
ARGS="--shapes 1024x4096,4096x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,lion-bf16 --reps 30" \
  RUN_TIMEOUT=120 RATIO=adamw-bf16/sgdm-bf16 bash scripts/device/code_ab.sh
