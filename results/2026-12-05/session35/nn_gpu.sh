#!/usr/bin/env bash
# Session 35: the nn GPU tests (tests/functional/test_nn_gpu.py) after session 35's patch() changes (input-only
# backward passes, zero_grad, the clip coefficient over the applied gradients, fp32 masters following writes,
# no_weight_decay groups), which ran on the CPU only. Run it in a device call of its own or before call2's A/B:
#   bash results/2026-12-05/session35/nn_gpu.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout "${TIMEOUT:-240}" python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_nn_gpu.py \
  -p no:cacheprovider -rf --tb=short -W ignore > "$OUT/nn.log" 2>&1
echo "nn rc $?"; tail -n 1 "$OUT/nn.log"; grep FAILED "$OUT/nn.log" | head -8
