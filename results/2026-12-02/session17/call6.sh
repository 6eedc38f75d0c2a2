#!/usr/bin/env bash
# Session 17 call 6: call 5's 14 failed GPU tests were the test's own shared-memory formula (it
# counted two tile buffers; an epilogue_stages 1 config has one; fixed in the test): every rule
# on the shared-buffer tall configs, then, if they pass, the acceptance grid on call 5's winners.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
mkdir -p $OUT/tests
timeout 200 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "every_rule and e1" -n 8 > $OUT/tests/tests.log 2>&1
rc=$?; echo "tests rc $rc"; tail -n 2 $OUT/tests/tests.log
if [ $rc -eq 0 ]; then
  GRID_TIMEOUT=330 bash results/2026-12-01/session15/call4.sh
else
  cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
fi
