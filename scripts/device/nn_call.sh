#!/usr/bin/env bash
# Device call for [nn] #4 (and a check of [core]) on the two-GPU machine, one command, two phases:
#   1. GPU 1: every GPU test (pytest -m gpu); beside it on GPU 0, host_overhead.py (fused vs FORGE:
#      step, backward, host enqueue, kernel time; the tests' compiles share the host with it);
#   2. when both are done, the peer table: scripts/device/peers.sh (group A on GPU 0, group B on GPU 1;
#      ratios within a group), with nothing else running while it is timed.
# Kind nvidia-h200-x2, carry [".whl"].
# Writes under $OUT (8 files): gpu_tests.log host.jsonl peer_gpu0.log peer_gpu1.log
#   peer_gpu0/e2e_peer.csv peer_gpu1/e2e_peer.csv e2e_peer.csv e2e_peer.png
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$SECONDS
BUDGET=${BUDGET:-560}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu_tests.log"
left() { echo $((BUDGET - (SECONDS - T0))); }
(
  export CUDA_VISIBLE_DEVICES=1
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -m gpu \
    tests/functional -q -p no:cacheprovider -n 4 --dist loadgroup --tb=short -rfE >> "$OUT/gpu_tests.log" 2>&1
) &
tests=$!
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 scripts/device/host_overhead.py fused forge-bf16 forge-int8 \
  > "$OUT/host.jsonl" 2> /tmp/host.err || tail -n 20 /tmp/host.err
wait $tests
cat "$OUT/host.jsonl"
grep -E "passed|failed|^FAILED|^E  " "$OUT/gpu_tests.log" | head -30
# phase 2 is scripts/device/peers.sh (its groups A and B, one per GPU) with the time left
BUDGET=$(left) bash scripts/device/peers.sh
rm -f "$OUT"/peer_gpu*/e2e_peer.png  # the combined plot is enough; the tool returns 8 files at most
echo "[nn_call.sh] $((SECONDS - T0)) s"
