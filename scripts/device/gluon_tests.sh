#!/usr/bin/env bash
# GPU kernel tests under a timeout, so a hang shows as rc 124 instead of eating the device call; by
# default the Gluon kernel's (Gluon, main-loop, poisoned-tile, every-rule and every-codec; not the LM
# head's) on 8 workers.
#   device call, from the repository root or a tree with tests/ and pyproject.toml copied in:
#   TIMEOUT=300 bash scripts/device/gluon_tests.sh     (log: $OUT/tests.log; rc, last line, failures printed)
# env: SELECT (pytest -k expression), WORKERS, TIMEOUT (s).
OUT=${OUT:-/tmp/out}
timeout "${TIMEOUT:-300}" python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "${SELECT:-(gluon or main_loop or poisoned or every_rule or every_codec) and not 151936}" -n "${WORKERS:-8}" \
  -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
