#!/usr/bin/env bash
# Device call for the [nn] scale table: fused AdamW vs FORGE bf16 / int8 states over Qwen3 sizes,
# batch 1, each arm in its own process (scripts/device/peers.py --table scale), cells split over two GPUs.
# The whole table does not fit one 600 s call; pick the cells per GPU (model:seq, comma-separated):
#   call A: CELLS0=qwen3-0.6b:512,qwen3-0.6b:2048,qwen3-1.7b:512,qwen3-1.7b:2048 CELLS1=qwen3-4b:512,qwen3-4b:2048
#   call B: CELLS0=qwen3-8b:2048 CELLS1=qwen3-14b:512   (14B: fused AdamW may not fit 141 GB; FORGE int8 must train)
#   device call: kind nvidia-h200-x2, command `CELLS0=... CELLS1=... bash scripts/device/scale.sh`
# Writes under $OUT: scale_gpu{0,1}.log, e2e_scale.csv (every cell's rows) and e2e_scale.png. Env: BUDGET (s, default 540),
# ARMS (default forge-bf16,forge-int8; fused always runs first in each cell).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$SECONDS
BUDGET=${BUDGET:-540}
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
run_cells() {  # GPU CELLS
  local gpu=$1 cells=$2 n i=0 cell
  IFS=, read -ra list <<< "$cells"
  n=${#list[@]}
  for cell in "${list[@]}"; do
    local left=$((BUDGET - (SECONDS - T0)))
    # an equal share of what is left for each remaining cell
    CUDA_VISIBLE_DEVICES=$gpu python3 scripts/device/peers.py --table scale --model "${cell%%:*}" --seq "${cell##*:}" \
      --arms "${ARMS:-forge-bf16,forge-int8}" --budget $((left / (n - i))) --out "$OUT/scale_gpu$gpu/${cell/:/_}"
    i=$((i + 1))
  done
}
run_cells 0 "${CELLS0:?set CELLS0=model:seq,...}" > "$OUT/scale_gpu0.log" 2>&1 &
a=$!
[ -n "${CELLS1:-}" ] && run_cells 1 "$CELLS1" > "$OUT/scale_gpu1.log" 2>&1
wait $a
grep -h '^\[peers\]' "$OUT"/scale_gpu*.log
csvs=$(ls "$OUT"/scale_gpu*/*/e2e_scale.csv 2>/dev/null | paste -sd, -)
[ -n "$csvs" ] && python3 -m forge_mcore.bench.e2e --report "$csvs" --out /tmp/scale_report | grep -v matplotlib
# the device tool returns 8 files: keep the logs and one combined CSV + plot, not one pair per cell
cp /tmp/scale_report/e2e_scale.csv /tmp/scale_report/e2e_scale.png "$OUT/" 2>/dev/null && rm -rf "$OUT"/scale_gpu0 "$OUT"/scale_gpu1
echo "[scale.sh] $((SECONDS - T0)) s"
