#!/usr/bin/env bash
# Session 40, device call 1 (an H200): re-sweeps on the H200 of the cells its standing grid (session 35) misses,
# written into the device's winners.csv under the H200's name (copy $OUT/winners.csv to
# forge_mcore/kernels/winners.csv before call 2, the grid):
#   lm16k: AdamW int8 on the LM head at BT 16384 (int8 0.918 of bf16 in session 35's grid). Its H200 row (tall, five
#          stages) was swept in session 30, before session 33's fragment-order codes; on the H100 (session 39) a
#          five-stage cooperative-tall ring won it (1.07x its baseline), where on the H200 in session 30 it had lost.
#   small: 1024 x 4096 at BT 512/1024, the three bf16 arms (ping-pong and tall), last swept in session 30.
#   sq1k:  4096^2 AdamW bf16 and Lion at BT 1024 (57.0%, 59.1% in session 35's grid).
#   bash results/2026-12-05/session40/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
# every (rule, codec, config) compiled first, in parallel processes on a small cell, so the timed sweeps find
# Triton's cache warm (the specializations do not depend on the shape: every dimension is a multiple of 64)
warm() {  # arm kernels
  timeout 200 python3 -m forge_mcore.bench.kernel --out "/tmp/warm_$1_$2" --shapes 1024x4096 --bts 1024 --arms "$1" \
    --sweep --sweep-kernels "$2" --reps 1 > "/tmp/warm_$1_$2.log" 2>&1 || echo "warm $1 $2 failed: $(tail -n 2 /tmp/warm_$1_$2.log)"
}
warm adamw-int8 gluon_tall,gluon_coop,gluon_coop_tall &
for arm in adamw-bf16 sgdm-bf16 lion-bf16; do warm $arm gluon_ws,gluon_tall & done
wait
echo "-- warm done at $(( $(date +%s) - start )) s"
sweep() {  # name shapes bts arms kernels timeout
  NAME=$1 SHAPES=$2 BTS=$3 ARMS=$4 KERNELS=$5 TIMEOUT=$6 SHOW=8 OUT=$OUT bash scripts/device/sweep_winners.sh
  echo "-- $1 done at $(( $(date +%s) - start )) s"
}
sweep lm16k 151936x4096 16384 adamw-int8 gluon_tall,gluon_coop,gluon_coop_tall 150
sweep small 1024x4096 512,1024 adamw-bf16,sgdm-bf16,lion-bf16 gluon_ws,gluon_tall 120
sweep sq1k 4096x4096 1024 adamw-bf16,lion-bf16 gluon_ws,gluon_tall 80
(cd "$OUT" && rm -f */*.png && tar czf /tmp/call1.tgz . && find . -mindepth 1 -not -name winners.csv -delete \
  && mv /tmp/call1.tgz .)
