#!/usr/bin/env bash
# Prepared in session 28, not run: the tests that tune or launch without a fixed config, after b9ea662
# (`ops._launch_triton`'s runs_as: the tuner times each config a launch runs once; CPU suite only) and
# `winners.lookup`'s nearest row, as the README runs the GPU suite. The fidelity test's duration against
# session 28 call 4's 90.9 s says what the deduplicated tuning saves.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 240 python3 -m pytest -q -m gpu tests/functional -p no:cacheprovider -n 4 --dist loadgroup \
  -k "fidelity or replayed or captures or lr_schedule or every_codec" -rf --tb=short -W ignore --durations=5 \
  > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -E "passed|failed" "$OUT/tests.log" | tail -1; grep -E "^FAILED|s call" "$OUT/tests.log" | head -12
