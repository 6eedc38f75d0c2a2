#!/usr/bin/env bash
# Session 21 call 4: the Gluon tile producer asks L2 for a consumer's next unit (weight and states,
# prefetch.global.L2) before its TMA fill (TileConfig.prefetch on Gluon configs, configs.CANDIDATES), so
# that the fill reads L2 instead of holding the TMA unit on HBM ahead of slab loads. Its GPU tests, then
# per BT <= 1024 cell and arm the committed winner against itself with prefetch=True (bits first); then
# the same with the prefetch two units ahead (FORGE_PREFETCH_AHEAD=2, an experiment's switch) on a
# subset. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 200 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "p1rNone and gluon" -n 8 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 2 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
export REFERENCE=winner ROUNDS=3 VARY="prefetch=True"
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:1024:adamw-bf16,sgdm-bf16,lion-bf16
4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024:adamw-int8
12288x4096:512,4096x12288:512,4096x12288:1024,151936x4096:512,151936x4096:1024:adamw-bf16" \
  OUT=$OUT bash scripts/device/config_ab_jobs.sh
mkdir -p "$OUT/ahead2"
FORGE_PREFETCH_AHEAD=2 JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,12288x4096:1024:adamw-bf16,sgdm-bf16" \
  OUT=$OUT/ahead2 bash scripts/device/config_ab_jobs.sh
