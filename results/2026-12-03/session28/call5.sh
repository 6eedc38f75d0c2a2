#!/usr/bin/env bash
# Session 28, call 5: call 4's failures again, as the README runs the GPU suite (`--dist loadgroup`: the
# LM-head cases share one worker; call 4 ran 14 workers without it and its 101 failures are all
# "CUDA out of memory" beside three LM-head cases of 30-49 GB). (Call 4's 6 errors were CPU test modules
# under tests/unit/tensor_parallel that its `tests` path collected: megatron-core is not on the device.)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
mapfile -t ids < results/2026-12-03/session28/call4/rerun_ids.txt
timeout "${TEST_TIMEOUT:-170}" python3 -m pytest -q -m "gpu or multigpu" "${ids[@]}" -p no:cacheprovider -n 8 \
  --dist loadgroup -rfE --tb=short -W ignore --durations=5 > "$OUT/tests_rerun.log" 2>&1
echo "tests rc $?"; grep -E "passed|failed" "$OUT/tests_rerun.log" | tail -1; grep -E "^(FAILED|ERROR)" "$OUT/tests_rerun.log" | head
