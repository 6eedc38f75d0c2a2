#!/usr/bin/env bash
# Session 40, device call 2 (an H200, right after call 1 on the same tree):
# 1. re-sweeps written into the device's winners.csv under the H200's name (copy $OUT/winners.csv to
#    forge_mcore/kernels/winners.csv afterwards):
#    lm16k: AdamW int8 on the LM head at BT 16384 (0.918 of bf16 in session 35's grid). Its H200 row (tall, five
#           stages) was swept in session 30, before session 33's fragment-order codes; on the H100 (session 39) a
#           five-stage cooperative-tall ring won it;
# 2. the acceptance grid on those winners (the H200's first since session 35; sessions 37-39 changed the winners
#    lookup and added the H100's rows, which an H200 must not take), then --acceptance on it.
#   bash results/2026-12-05/session40/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
# every (rule, codec, config) compiled first, in parallel processes on a small cell, so the timed sweeps find
# Triton's cache warm (the specializations do not depend on the shape: every dimension is a multiple of 64)
# (kept as it ran; a new call should use scripts/device/warm_sweep.sh, which does this per arm)
warm() {  # arm kernels
  timeout 150 python3 -m forge_mcore.bench.kernel --out "/tmp/warm_$1_$2" --shapes 1024x4096 --bts 1024 --arms "$1" \
    --sweep --sweep-kernels "$2" --reps 1 > "/tmp/warm_$1_$2.log" 2>&1 || echo "warm $1 $2 failed: $(tail -n 2 /tmp/warm_$1_$2.log)"
}
warm adamw-int8 gluon_tall,gluon_coop_tall
wait
echo "-- warm done at $(( $(date +%s) - start )) s"
sweep() {  # name shapes bts arms kernels timeout
  NAME=$1 SHAPES=$2 BTS=$3 ARMS=$4 KERNELS=$5 TIMEOUT=$6 SHOW=8 OUT=$OUT bash scripts/device/sweep_winners.sh
  echo "-- $1 done at $(( $(date +%s) - start )) s"
}
sweep lm16k 151936x4096 16384 adamw-int8 gluon_tall,gluon_coop_tall 110
mkdir -p "$OUT/g" && GRID_TIMEOUT=230 OUT=$OUT/g bash results/2026-12-01/session15/call4.sh
echo "-- grid done at $(( $(date +%s) - start )) s"
(cd "$OUT/g" && tar xzf call4.tgz --wildcards "*grid/kernel.csv" "*grid/ceilings.json")
python3 -m forge_mcore.bench.kernel --acceptance "$OUT/g/grid/kernel.csv" > "$OUT/acceptance.txt" 2>&1
head -n 12 "$OUT/acceptance.txt"
rm -f "$OUT"/*/*.png
