#!/usr/bin/env bash
# Device call for [nn] #4: the single-GPU peer table (Qwen3-8B, batch 1, seq 512) with the carried peers.
#   here, once:  ../shared/device/wheels.sh peers        (fills .whl/, ~47 MiB with megatron-core)
#   device call: carry [".whl"], command `bash scripts/device/peers.sh`  (nvidia-h200 or nvidia-h200-x2)
# Each arm runs in its own process (forge_mcore.bench.e2e's worker). On two GPUs the arms are split in two
# groups that run side by side, one per GPU, each with its own fused-AdamW baseline (ratios are drawn within
# a group): group A holds the acceptance's comparisons (FORGE bf16/int8 vs bitsandbytes, torchao, optimi).
# On one GPU the groups run one after the other, A first, and what no longer fits is recorded as skipped.
# Writes under $OUT: peer_gpu0/e2e_peer.csv (+ peer_gpu1/), peer_gpu0.log (+ peer_gpu1.log) and
# e2e_peer.csv (all rows); the PNG is drawn here afterwards:
#   python -m forge_mcore.bench.e2e --report <files>/e2e_peer.csv --out results/<date>
# Env: BUDGET (seconds for the arms, default 540: the command limit is 600), ARMS_A / ARMS_B to override groups,
#   GALORE=1 (adds the galore arm last in group B; it holds the call up to its cap, peers.py CAPS),
#   PEERS_ARGS (more peers.py arguments; PEERS_ARGS=--smoke with a fake nvidia-smi checks this script on a CPU).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$SECONDS
BUDGET=${BUDGET:-540}
wheels=$(ls .whl/*.whl 2>/dev/null | grep -v megatron_core)
[ -n "$wheels" ] || { echo "no peer wheels in .whl/: run ../shared/device/wheels.sh peers here and carry .whl"; exit 1; }
# shellcheck disable=SC2086
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $wheels \
  2>&1 | grep -v "as the 'root' user"
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}
python3 -c "import bitsandbytes" 2>/dev/null || echo "[peers.sh] bitsandbytes does not import: the bnb arms will fail"
export PYTHONUNBUFFERED=1
ARMS_A=${ARMS_A:-fused,forge-bf16,forge-int8,bnb8bit,torchao8bit,optimi-release}
ARMS_B=${ARMS_B:-fused,vanilla,forge-fp8,forge-int8+bnb,flashoptim,apollo,adalomo}
# GaLore's first step takes an SVD of each of Qwen3-8B's 252 decoder matrices (minutes on one GPU): opt in
[ "${GALORE:-0}" = 1 ] && ARMS_B="$ARMS_B,galore"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,memory.used --format=csv
left=$((BUDGET - (SECONDS - T0)))
if [ "$ngpu" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=0 python3 scripts/device/peers.py --arms "$ARMS_A" --budget "$left" ${PEERS_ARGS:-} \
    --out "$OUT/peer_gpu0" > "$OUT/peer_gpu0.log" 2>&1 &
  a=$!
  CUDA_VISIBLE_DEVICES=1 python3 scripts/device/peers.py --arms "$ARMS_B" --budget "$left" ${PEERS_ARGS:-} \
    --out "$OUT/peer_gpu1" > "$OUT/peer_gpu1.log" 2>&1 &
  b=$!
  wait $a; wait $b
else
  CUDA_VISIBLE_DEVICES=0 python3 scripts/device/peers.py --arms "$ARMS_A,${ARMS_B#fused,}" --budget "$left" ${PEERS_ARGS:-} \
    --out "$OUT/peer_gpu0" > "$OUT/peer_gpu0.log" 2>&1
fi
grep -h '^\[peers\]' "$OUT"/peer_gpu*.log
csvs=$(ls "$OUT"/peer_gpu*/e2e_peer.csv 2>/dev/null | paste -sd, -)
[ -n "$csvs" ] || { echo "no CSV written"; tail -n 30 "$OUT"/peer_gpu*.log; exit 1; }
python3 -m forge_mcore.bench.e2e --report "$csvs" --out "$OUT" | grep -v matplotlib
echo "[peers.sh] $((SECONDS - T0)) s"
