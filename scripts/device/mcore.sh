#!/usr/bin/env bash
# Device call for [mcore] #5: every GPU cell of forge_mcore/bench/mcore_ab.py in one command.
#   here, once:  ../shared/device/wheels.sh mcore        (megatron-core 0.16.1, 2.5 MB, into .whl/)
#   device call: kind nvidia-h200-x2, carry [".whl"], command `bash scripts/device/mcore.sh`
# Plan on two GPUs (~5-7 min expected, BUDGET caps it below the 600 s command limit):
#   1. the one-rank cells ep-local (the ep2 cell's one-rank references) and tp1 (one process, GPU 0) in
#      the background, beside
#   2. the two-GPU loss cells tp2, tp2-sp (one torchrun on both GPUs);
#   3. when both are done, the ep2 cell (with --ep-local when the one-rank references exist), then the
#      memory/step-time cell alone (nothing else on the GPUs while it is timed).
# On one GPU (kind nvidia-h200): ep-local, then ep2 with both ranks on the GPU over gloo
# (--share-gpu: the same bits, no timed cell), then tp1 if WITH_TP1 is set.
# A torchrun (python3 -m torch.distributed.run) that fails is relaunched with --resume: the cells it attempted keep their rows (a failed or
# killed cell is recorded as such, not retried) and the remaining ones run, while time is left.
# Writes under $OUT: mcore_tp1/{results.json,summary.csv}, mcore_tp2/{results.json,summary.csv},
# mcore_tp1.log, mcore_tp2.log (both ranks' output); prints both summaries last.
# Env: BUDGET (s, default 570), CELL_TIMEOUT (s per loss cell, default 240), MEMORY_TIMEOUT (default 300),
#   MCORE_ARGS (more mcore_ab arguments; MCORE_ARGS=--smoke with a fake nvidia-smi checks this script on a CPU).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$SECONDS
BUDGET=${BUDGET:-570}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/megatron_core-*.whl 2>&1 | grep -v "as the 'root' user"
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}
python3 -W ignore -c "import megatron.core" || { echo "megatron-core missing: carry .whl (wheels.sh mcore)"; exit 1; }
export PYTHONUNBUFFERED=1 CUDA_DEVICE_MAX_CONNECTIONS=1

left() { echo $((BUDGET - (SECONDS - T0))); }

# ab NPROC NAME CELLS CAP [ARGS...]: torchrun (relaunched with --resume after a failure) until every cell
# was attempted
ab() {
  local n=$1 name=$2 cells=$3 cap=$4 l before
  shift 4
  for try in 1 2 3 4; do
    l=$(left)
    if [ "$l" -lt 60 ]; then echo "[mcore.sh] $name: ${l} s left, $cells not (all) run" | tee -a "$OUT/$name.log"; return 1; fi
    before=$(md5sum "$OUT/$name/results.json" 2>/dev/null)
    echo "[mcore.sh] $name: launch $try, cells $cells, $l s left" | tee -a "$OUT/$name.log"
    # shellcheck disable=SC2086
    timeout -k 10 "$l" python3 -m torch.distributed.run --standalone --nproc-per-node "$n" -m forge_mcore.bench.mcore_ab --cells "$cells" \
      --resume --out "$OUT/$name" --cell-timeout $((cap < l - 20 ? cap : l - 20)) ${MCORE_ARGS:-} "$@" \
      >> "$OUT/$name.log" 2>&1 && return 0
    echo "[mcore.sh] $name: torchrun failed (exit $?) after $((SECONDS - T0)) s" | tee -a "$OUT/$name.log"
    if [ "$(md5sum "$OUT/$name/results.json" 2>/dev/null)" = "$before" ]; then
      echo "[mcore.sh] $name: no cell was attempted; not relaunching" | tee -a "$OUT/$name.log"; return 1
    fi
  done
}

nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used --format=csv \
  | tee "$OUT/mcore_tp2.log"
if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then
  # one GPU lent: the ep2 cell's losses with both ranks on it over gloo (mcore_ab --share-gpu); the
  # TP=2 loss cells and the memory/step cell need two GPUs and are not run
  echo "[mcore.sh] one GPU: ep-local, then ep2 --share-gpu; tp1 after them; tp2, tp2-sp, memory not run" \
    | tee -a "$OUT/mcore_tp2.log"
  ab 1 mcore_tp1 ep-local "${CELL_TIMEOUT:-240}"
  ab 2 mcore_tp2 ep2 "${CELL_TIMEOUT:-240}" --share-gpu --ep-local "$OUT/mcore_tp1"
  [ -n "${WITH_TP1:-}" ] && ab 1 mcore_tp1 tp1 "${CELL_TIMEOUT:-240}"
else
  (export CUDA_VISIBLE_DEVICES=0; ab 1 mcore_tp1 ep-local,tp1 "${CELL_TIMEOUT:-240}") &
  tp1=$!
  ab 2 mcore_tp2 tp2,tp2-sp "${CELL_TIMEOUT:-240}"
  wait $tp1
  if [ -f "$OUT/mcore_tp1/ep_local.json" ]; then
    ab 2 mcore_tp2 ep2 "${CELL_TIMEOUT:-240}" --ep-local "$OUT/mcore_tp1"
  else
    ab 2 mcore_tp2 ep2 "${CELL_TIMEOUT:-240}"
  fi
  ab 2 mcore_tp2 memory "${MEMORY_TIMEOUT:-300}"
fi
rm -f "$OUT/mcore_tp1/ep_local_state.pt"  # initial weights, tens of MB: not worth a returned file

for name in mcore_tp1 mcore_tp2; do
  grep -h "^\[mcore_ab\] .* done in\|Error\|error:" "$OUT/$name.log" | grep -v Warning | tail -n 20
done
for f in "$OUT"/mcore_tp1/summary.csv "$OUT"/mcore_tp2/summary.csv; do
  echo "== $f"; [ -f "$f" ] && { column -s, -t < "$f" 2>/dev/null || cat "$f"; }
done
echo "[mcore.sh] $((SECONDS - T0)) s"
