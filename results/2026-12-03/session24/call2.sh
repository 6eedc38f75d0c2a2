#!/usr/bin/env bash
# Session 24 call 2 (3ff1c87 + the poisoned-tile test's int8 shape made TMA-aligned): the poisoned-tile GPU tests
# on every Gluon config, bf16 and int8; then the tall int8 loop against the package before it (ab_base =
# git archive bdc729e forge_mcore) where int8 runs on tall tiles, the BT 4096 cells
# (scripts/device/code_ab.sh new/base/new2; the int8/bf16 ratio within each run).
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 100 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "poisoned" -n 8 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 2 "$OUT/tests.log"
grep FAILED "$OUT/tests.log" | head -5
ARGS="--shapes 4096x4096,12288x4096,4096x12288 --bts 4096 --arms adamw-int8,adamw-bf16 --reps 30" \
  RUN_TIMEOUT=100 bash scripts/device/code_ab.sh
