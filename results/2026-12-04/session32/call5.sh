#!/usr/bin/env bash
# Session 32, device call 5: the GPU tests whose ids do not say int8 but run int8 states: the App. E fidelity
# ordering (a "forge int8" arm trained beside torch AdamW and the bf16 arms), the tuner-path tests and every codec.
#   bash results/2026-12-04/session32/call5.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q -m "gpu and not multigpu" tests/functional -n 4 --dist loadgroup \
  -p no:cacheprovider -k "(fidelity or replayed or captures or lr_schedule or every_codec) and not int8" \
  -rf --tb=short -W ignore --durations=5 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 9 "$OUT/tests.log"
