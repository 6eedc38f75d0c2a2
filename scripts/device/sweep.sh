#!/usr/bin/env bash
# Device call for [core]/[perf] on the two-GPU machine (kind nvidia-h200-x2): every GPU test, and a
# tile-config sweep (CONFIGS + CANDIDATES, or CANDIDATES only with SWEEP_CONFIGS=candidates; graph-timed)
# split over both GPUs:
#   GPU 1: pytest -m gpu but the warp-specialized kernel's tests (TEST_TIMEOUT), then the sweep of SHAPES1;
#   GPU 0: the warp-specialized kernel's tests (WS_TIMEOUT: a deadlock ends there), then the sweep of
#          SHAPES0, alone on its GPU while it is timed. Where those tests fail, neither sweep
#          runs gluon_ws (FORGE_GLUON=0).
# On one GPU (kind nvidia-h200) only the GPU 0 half runs.
# Writes under $OUT (8 files): gpu_tests.log (both GPUs' tests), gpu{0,1}/{kernel.csv,sweep.csv,kernel.log},
# gpu0/ceilings.json.
# Then, here: python -m forge_mcore.bench.kernel --winners DIR/gpu0/kernel.csv (sweep.csv beside it counts)
# once a winning candidate has moved into configs.CONFIGS.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/gpu0" "$OUT/gpu1"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
T0=$SECONDS
BUDGET=${BUDGET:-520}
BTS=${BTS:-512,1024,4096}
ARMS=${ARMS:-adamw-bf16,adamw-int8}
SHAPES0=${SHAPES0:-4096x4096,1024x4096,12288x4096}
SHAPES1=${SHAPES1:-4096x12288}
# "candidates": only configs.CANDIDATES beside the tuned config (FORGE_AUTOTUNE=0: the committed winner)
SWEEP_CONFIGS=${SWEEP_CONFIGS:-all}

sweep() {  # sweep GPU SHAPES SECONDS
  local kernels=triton,gluon_ws gluon=1
  [ -f /tmp/ws_ok ] || { kernels=triton; gluon=0; }
  CUDA_VISIBLE_DEVICES=$1 FORGE_GLUON=$gluon timeout -k 10 "$3" python3 -m forge_mcore.bench.kernel --out /tmp/sweep$1 --sweep --reps 20 \
    --sweep-configs "$SWEEP_CONFIGS" --sweep-kernels "$kernels" --shapes "$2" --bts "$BTS" --arms "$ARMS" \
    > "$OUT/gpu$1/kernel.log" 2>&1
  cp /tmp/sweep$1/kernel.csv /tmp/sweep$1/sweep.csv "$OUT/gpu$1/" 2>/dev/null
}

gpu_tests() {  # gpu_tests GPU SECONDS PYTEST-K: the GPU tests selected by -k, onto gpu_tests.log
  CUDA_VISIBLE_DEVICES=$1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout -k 10 "$2" \
    python3 -m pytest -m gpu tests/functional -q -p no:cacheprovider -n 4 --dist loadgroup --tb=short -rfE \
    -k "$3" > "/tmp/tests$1.log" 2>&1
  local rc=$?
  { echo "[sweep.sh] GPU $1, -k '$3': exit $rc after $((SECONDS - T0)) s"; cat "/tmp/tests$1.log"; } >> "$OUT/gpu_tests.log"
  return $rc
}

summary() {  # the tests' outcome and every benchmark line, then the time taken
  grep -E "passed|failed|^FAILED|^E  |\[sweep.sh\]" "$OUT/gpu_tests.log" | head -40
  grep -hE "^ +[0-9]+x[0-9]+ BT=" "$OUT"/gpu*/kernel.log
  echo "[sweep.sh] $((SECONDS - T0)) s"
}

rm -f /tmp/ws_ok
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/gpu_tests.log"
if [ "$(nvidia-smi -L | wc -l)" -eq 1 ]; then  # one GPU (kind nvidia-h200): the GPU 0 half only
  gpu_tests 0 "${WS_TIMEOUT:-150}" gluon_ws && touch /tmp/ws_ok
  sweep 0 "$SHAPES0" $((BUDGET - (SECONDS - T0)))
  cp /tmp/sweep0/ceilings.json "$OUT/gpu0/" 2>/dev/null
  summary
  exit 0
fi
(
  gpu_tests 1 "${TEST_TIMEOUT:-240}" "not gluon_ws"
  sweep 1 "$SHAPES1" $((BUDGET - (SECONDS - T0)))
) &
gpu1=$!
gpu_tests 0 "${WS_TIMEOUT:-150}" gluon_ws && touch /tmp/ws_ok
sweep 0 "$SHAPES0" $((BUDGET - (SECONDS - T0)))
cp /tmp/sweep0/ceilings.json "$OUT/gpu0/" 2>/dev/null
wait $gpu1
summary
