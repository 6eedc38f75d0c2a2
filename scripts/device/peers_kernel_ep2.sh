#!/usr/bin/env bash
# One two-GPU device call (kind nvidia-h200-x2, carry [".whl"]) for what the earlier calls left:
#   GPU 0: the [nn] peer table's acceptance arms (fused AdamW, FORGE bf16/int8, bitsandbytes AdamW8bit);
#   GPU 1: the small-BT tile-config sweep of the kernel benchmark (nothing else on GPU 1 while it is
#          timed), then the remaining peer arms;
#   both:  the [mcore] EP=2 MoE cell (forge_mcore.bench.mcore_ab --cells ep2).
# Writes 8 files under $OUT: peer_gpu{0,1}.log, peer_gpu{0,1}/e2e_peer.csv, kernel_small.csv, sweep_small.csv,
# mcore_ep2/{results.json,summary.csv}. Env: BUDGET (s, default 540).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$SECONDS
BUDGET=${BUDGET:-540}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  2>&1 | grep -v "as the 'root' user"
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
left() { echo $((BUDGET - (SECONDS - T0))); }
PEERS_END=${PEERS_END:-$((BUDGET - 150))}  # seconds into the call by which the peer arms must be done

CUDA_VISIBLE_DEVICES=0 python3 scripts/device/peers.py --arms "${ARMS_A:-fused,forge-bf16,forge-int8,bnb8bit}" \
  --budget $((PEERS_END - (SECONDS - T0))) --out "$OUT/peer_gpu0" > "$OUT/peer_gpu0.log" 2>&1 &
a=$!
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 130 python3 -m forge_mcore.bench.kernel --out /tmp/ks --sweep --reps 20 \
    --shapes 4096x4096,12288x4096,1024x4096 --bts 512,1024 --arms adamw-bf16,adamw-int8 > /tmp/ks.log 2>&1
  cp /tmp/ks/kernel.csv "$OUT/kernel_small.csv"; cp /tmp/ks/sweep.csv "$OUT/sweep_small.csv"
  grep -E "^ +[0-9]+x[0-9]+ BT=|^ceilings" /tmp/ks.log
  python3 scripts/device/peers.py --arms "${ARMS_B:-fused,forge-fp8,optimi-release,vanilla}" \
    --budget $((PEERS_END - (SECONDS - T0))) --out "$OUT/peer_gpu1" > "$OUT/peer_gpu1.log" 2>&1
) &
b=$!
wait $a; wait $b
grep -h '^\[peers\]' "$OUT"/peer_gpu*.log
l=$(left)
if [ "$l" -gt 60 ]; then
  timeout -k 10 "$l" python3 -m torch.distributed.run --standalone --nproc-per-node 2 -m forge_mcore.bench.mcore_ab \
    --cells ep2 --out "$OUT/mcore_ep2" --cell-timeout $((l - 20)) > /tmp/ep2.log 2>&1
  grep -h "done in\|Error" /tmp/ep2.log | tail -5
  cat "$OUT/mcore_ep2/summary.csv" 2>/dev/null
fi
echo "[peers_kernel_ep2.sh] $((SECONDS - T0)) s"
