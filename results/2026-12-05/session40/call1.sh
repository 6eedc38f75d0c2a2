#!/usr/bin/env bash
# Session 40, device call 1 (an H200): the last round of tiles claimed by the programs that reach it first
# (TileConfig.claim_last_round, configs.CANDIDATES), against the committed kernel. Ran on the tree with
# claim_last_round.patch applied (`git apply results/2026-12-05/session40/claim_last_round.patch`); not merged.
# 1. GPU tests: each claimed candidate at parity (every codec), with a poisoned tile, main-loop-only and traced, and
#    eight back-to-back PDL steps eagerly and in a CUDA graph, claimed, bit-equal to the static schedule's;
# 2. each missed cell's winner against itself with the last round claimed (config_ab.py, bits first).
# 3. the static schedule itself against the committed package (its loops now carry the last round's claim):
#    scripts/device/code_ab.sh, new / base / new2 (ab_base: `git archive main forge_mcore`, made locally);
#   bash results/2026-12-05/session40/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
timeout 150 python3 -m pytest -q -n 8 -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "back_to_back or (claimed and not every_rule)" -rf --tb=short > "$OUT/tests.log" 2>&1
echo "tests rc $? ($(( $(date +%s) - start )) s)"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head
mkdir -p "$OUT/claim"
JOBS=$'1024x4096:512,1024x4096:1024:sgdm-bf16,lion-bf16,adamw-bf16\n4096x4096:1024:adamw-bf16,lion-bf16' \
  REFERENCE=winner VARY="claim_last_round=True" ROUNDS=5 WARM_TIMEOUT=200 JOB_TIMEOUT=150 OUT=$OUT/claim \
  bash scripts/device/config_ab_jobs.sh > "$OUT/claim.log" 2>&1
echo "claim A/B done ($(( $(date +%s) - start )) s)"; tail -n 14 "$OUT/claim.log"
mkdir -p "$OUT/code_ab"
ARGS="--shapes 1024x4096 --bts 512,1024 --arms sgdm-bf16,adamw-bf16 --reps 30" RATIO=sgdm-bf16/adamw-bf16 \
  RUN_TIMEOUT=80 OUT=$OUT/code_ab bash scripts/device/code_ab.sh > "$OUT/code_ab.log" 2>&1
echo "code_ab done ($(( $(date +%s) - start )) s)"; tail -n 20 "$OUT/code_ab.log"
