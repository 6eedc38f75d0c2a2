#!/usr/bin/env bash
# Device call for [nn] #4 (and a check of [core]) on the two-GPU machine, one command, two phases:
#   1. GPU 1: every GPU test (pytest -m gpu); beside it on GPU 0 (on a one-GPU machine: after them), host_overhead.py with INTERLEAVE=1
#      (fused AdamW and FORGE bf16, then fused and FORGE int8, each pair built in one process and
#      stepped alternately: this host's speed drifts within a minute, a ratio of arms timed one after
#      the other carries that drift);
#   2. when both are done, the peer table: scripts/device/peers.sh (group A on GPU 0, group B on GPU 1;
#      ratios within a group), with nothing else running while it is timed.
# Env: BUDGET (s), TEST_TIMEOUT (s), HOST_ARMS (FORGE arms each interleaved with fused AdamW; default
#   "forge-bf16 forge-int8"), ARMS_A / ARMS_B (peers.sh's groups).
# Kind nvidia-h200-x2 (or nvidia-h200: phases in turn, peer groups one after the other), carry [".whl"].
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
# one GPU (kind nvidia-h200): the tests run first, alone, and the timing follows
test_gpu=$(( $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') > 1 ? 1 : 0 ))
(
  export CUDA_VISIBLE_DEVICES=$test_gpu
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -m gpu \
    tests/functional -q -p no:cacheprovider -n 4 --dist loadgroup --tb=short -rfE >> "$OUT/gpu_tests.log" 2>&1
) &
tests=$!
[ "$test_gpu" = 0 ] && wait $tests
for forge in ${HOST_ARMS:-forge-bf16 forge-int8}; do
  CUDA_VISIBLE_DEVICES=0 INTERLEAVE=1 timeout 150 python3 scripts/device/host_overhead.py fused $forge \
    >> "$OUT/host.jsonl" 2> /tmp/host.err || tail -n 20 /tmp/host.err
done
wait $tests
cut -c1-160 "$OUT/host.jsonl"
grep -E "passed|failed|^FAILED|^E  " "$OUT/gpu_tests.log" | head -30
# phase 2 is scripts/device/peers.sh (its groups A and B, one per GPU) with the time left
BUDGET=$(left) bash scripts/device/peers.sh
rm -f "$OUT"/peer_gpu*/e2e_peer.png  # the combined plot is enough; the tool returns 8 files at most
echo "[nn_call.sh] $((SECONDS - T0)) s"
