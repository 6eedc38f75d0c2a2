#!/usr/bin/env bash
# Session 28, call 4: every GPU test that calls 1 and 3 did not run (`-k "not ring"`: the tests without a
# tile config, test_nn_gpu.py) and the fidelity ordering test (its id matches "ring"; call 2 cut it at
# 90 s while it tuned the keys no winner covers), 14 workers, the slowest 15 listed.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 450 python3 -m pytest -q -m "gpu or multigpu" tests -p no:cacheprovider -n 14 \
  -k "not ring or fidelity_ordering" -rf --tb=short -W ignore --durations=15 > "$OUT/tests_rest.log" 2>&1
echo "tests rc $?"; grep -E "passed|failed" "$OUT/tests_rest.log" | tail -2; grep FAILED "$OUT/tests_rest.log" | head -10
