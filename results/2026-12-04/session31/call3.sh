#!/usr/bin/env bash
# Session 31, device calls 3-5: the whole single-GPU suite on the committed tree, in three parts that each fit
# a call (1,006 tests; session 30 ran 539 of them on its changes):
#   SELECT="gluon_kernel_every_rule and int8" NAME=a bash results/2026-12-04/session31/call3.sh
#   SELECT="gluon_kernel_every_rule and not int8" NAME=b bash results/2026-12-04/session31/call3.sh
#   SELECT="not gluon_kernel_every_rule" NAME=c NN=1 bash results/2026-12-04/session31/call3.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout "${TIMEOUT:-540}" python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py \
  -p no:cacheprovider -k "$SELECT" -n "${WORKERS:-14}" --dist loadgroup -rf --tb=short -W ignore \
  > "$OUT/tests_$NAME.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests_$NAME.log"; grep FAILED "$OUT/tests_$NAME.log" | head -8
if [ -n "${NN:-}" ]; then
  timeout 120 python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_nn_gpu.py -p no:cacheprovider \
    -rf --tb=short -W ignore > "$OUT/nn.log" 2>&1
  echo "nn rc $?"; tail -n 1 "$OUT/nn.log"
fi
