#!/usr/bin/env bash
# Session 29 call 2 (at the commit after e0eabd1: AdamW's sqrt(bc2) on the per-step scalars, one multiply per
# element fewer, results within rounding of before): the step against the package before it (ab_base = git archive
# e0eabd1 forge_mcore: call 1's tree) on AdamW bf16/int8 at BT 512/1024 (code_ab.sh new/base/new2), then the GPU tests
# that compare AdamW with torch or the Triton kernel and the tuner-path tests (fidelity, replayed, captures,
# lr_schedule, every_codec: session 28's next/call1.sh), as the README runs them (--dist loadgroup).
#   local, before the call: rm -rf ab_base && mkdir ab_base && git archive e0eabd1 forge_mcore | tar -x -C ab_base
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
ARGS="--shapes 4096x4096,1024x4096,4096x12288 --bts 512,1024 --arms adamw-bf16,adamw-int8 --reps 20" \
  RUN_TIMEOUT=${RUN_TIMEOUT:-90} bash scripts/device/code_ab.sh
timeout ${TEST_TIMEOUT:-220} python3 -m pytest -q -m gpu tests/functional -p no:cacheprovider -n 8 --dist loadgroup \
  -k "adamw_parity or every_rule_on_gpu or trains_like or at_parity or fidelity or replayed or captures or lr_schedule \
or every_codec or (gluon_kernel_every_rule and adamw)" -rf --tb=short -W ignore --durations=5 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -E "passed|failed" "$OUT/tests.log" | tail -1; grep -E "^FAILED|s call" "$OUT/tests.log" | head -12
