#!/usr/bin/env bash
# Session 31, device call 1: three ping-pong consumer warpgroups (configs.CANDIDATES, num_warps 12: a
# consumer's rule has two other main loops to hide behind; offline int8 stack 16 B at 160 registers, session
# 12's attempt spilled 320 B). Their GPU tests, then each BT <= 1024 cell that misses (int8 <= bf16, or 60% of
# floor for AdamW bf16) with its committed winner against the candidates: bits first, then time, interleaved
# (scripts/device/config_ab.py, REFERENCE=winner).
#   bash results/2026-12-04/session31/call1.sh     (on 5697c51, or 21f592f with three_consumers.patch applied:
#   the candidates were reverted after this call)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
INT8_CELLS=151936x4096:1024,4096x4096:1024,12288x4096:1024,4096x4096:512,12288x4096:4096
BF16_CELLS=4096x4096:1024,4096x12288:1024,1024x4096:1024
# compile every arm of every cell in parallel (and check its bits) while the candidates' GPU tests run
for cell in ${INT8_CELLS//,/ }; do
  REFERENCE=winner ARMS=adamw-int8 CELLS=$cell WARM_ONLY=1 OUT=$OUT/warm_int8_$cell timeout 240 \
    python3 scripts/device/config_ab.py > "$OUT/bits_int8_$cell.log" 2>&1 &
done
for cell in ${BF16_CELLS//,/ }; do
  REFERENCE=winner ARMS=adamw-bf16 CELLS=$cell WARM_ONLY=1 OUT=$OUT/warm_bf16_$cell timeout 240 \
    python3 scripts/device/config_ab.py > "$OUT/bits_bf16_$cell.log" 2>&1 &
done
timeout ${TEST_TIMEOUT:-240} python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "w12 and (at_parity or poisoned or main_loop or traced or (every_rule and (adamw or lion)))" -n 8 --dist loadgroup -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
wait
grep -h "^{" "$OUT"/bits_*.log; grep -h -v "^{" "$OUT"/bits_*.log | tail -n 5
mkdir -p "$OUT/int8" "$OUT/bf16"
ROUNDS=3 REFERENCE=winner ARMS=adamw-int8 CELLS=$INT8_CELLS OUT=$OUT/int8 timeout ${INT8_TIMEOUT:-200} \
  python3 scripts/device/config_ab.py > "$OUT/ab_int8.log" 2>&1; echo "int8 ab rc $?"
ROUNDS=3 REFERENCE=winner ARMS=adamw-bf16 CELLS=$BF16_CELLS OUT=$OUT/bf16 timeout ${BF16_TIMEOUT:-100} \
  python3 scripts/device/config_ab.py > "$OUT/ab_bf16.log" 2>&1; echo "bf16 ab rc $?"
cd "$OUT" && tar czf /tmp/call1.tgz . && rm -rf "$OUT"/* && mv /tmp/call1.tgz "$OUT/"
