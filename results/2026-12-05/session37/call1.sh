#!/usr/bin/env bash
# Session 37, device call 1: what a user of the lent machine (mostly an H100 now) gets from the committed
# kernel: the GPU tests that run a step at parity on committed winners (an H100 borrows the H200's, by
# architecture), then the acceptance grid on them (session 15's call4.sh: 5 shapes x 4 BTs x 4 arms).
#   bash results/2026-12-05/session37/call1.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit --format=csv > $OUT/device.txt; cat $OUT/device.txt
timeout "${TEST_TIMEOUT:-150}" python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py \
  -p no:cacheprovider -n 14 --dist loadgroup -rf --tb=short -W ignore \
  -k "adamw_parity_at_real_shapes or every_rule_on_gpu or lr_zero or replayed or back_to_back or captures" \
  > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
mkdir -p $OUT/grid_call && GRID_TIMEOUT=${GRID_TIMEOUT:-400} OUT=$OUT/grid_call bash results/2026-12-01/session15/call4.sh
