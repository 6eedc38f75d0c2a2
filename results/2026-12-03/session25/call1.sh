#!/usr/bin/env bash
# Session 25 call 1 (the working tree after 3a57a71: the block codecs' per-row divisions as div_rn's fast path
# without its range check and slow-path call, and x / Q as a product corrected by one fma): the divisions against
# div_rn for every operand, the int8/fp8 GPU parity tests; then the int8 step against the package before it
# (ab_base = git archive 3a57a71 forge_mcore), bf16 beside it as the control (scripts/device/code_ab.sh new/base/new2).
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 170 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider --dist loadgroup \
  -k "division or (int8 and (parity or poisoned or codec_and_store or every_tile)) or fp8" -n 8 \
  > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 2 "$OUT/tests.log"
grep -E "FAILED|Error" "$OUT/tests.log" | head -8
ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16 --reps 30" \
  RUN_TIMEOUT=120 bash scripts/device/code_ab.sh
