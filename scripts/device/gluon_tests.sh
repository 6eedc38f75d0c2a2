#!/usr/bin/env bash
# The Gluon kernel's GPU tests (Gluon, main-loop, poisoned-tile, every-rule and every-codec; not the LM
# head's) on 8 workers, under a timeout so a hang shows as rc 124 instead of eating the device call.
#   device call, from the repository root or a tree with tests/ and pyproject.toml copied in:
#   TIMEOUT=300 bash scripts/device/gluon_tests.sh     (log: $OUT/tests.log, its last lines printed)
OUT=${OUT:-/tmp/out}
timeout "${TIMEOUT:-300}" python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "(gluon or main_loop or poisoned or every_rule or every_codec) and not 151936" -n 8 > "$OUT/tests.log" 2>&1
echo "rc $?" >> "$OUT/tests.log"
tail -n 3 "$OUT/tests.log"
grep FAILED "$OUT/tests.log" | head -5
