#!/usr/bin/env bash
# Session 37, device call 3 (an H100): the cells that missed a target in call 2's grid on borrowed H200 winners,
# swept on the H100 (every config of the kernels that win such cells on the H200), their winners written under the
# H100's name (scripts/device/sweep_winners.sh, one invocation per group, each merging into the device's
# winners.csv; the last copy is $OUT/winners.csv: copy it to forge_mcore/kernels/winners.csv).
# Estimated ~8 minutes (LM head cells take 30-50 ms a step).
#   bash results/2026-12-05/session37/call3.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
# every (rule, codec, config) compiled first, in parallel processes on a small cell (the kernels' specializations do
# not depend on the shape: every dimension here is a multiple of 64), so the timed sweeps find Triton's cache warm
warm() {  # arm kernels
  timeout 200 python3 -m forge_mcore.bench.kernel --out "/tmp/warm_$1_$2" --shapes 1024x4096 --bts 1024 --arms "$1" \
    --sweep --sweep-kernels "$2" --reps 1 > "/tmp/warm_$1_$2.log" 2>&1 || echo "warm $1 $2 failed: $(tail -n 2 /tmp/warm_$1_$2.log)"
}
for arm in adamw-int8 sgdm-bf16 lion-bf16; do warm $arm gluon_tall,gluon_coop,gluon_coop_tall & done
warm sgdm-bf16 gluon_ws & warm lion-bf16 gluon_ws & warm adamw-int8 gluon_ws &
wait
echo "-- warm done at $(( $(date +%s) - start )) s"
sweep() {  # name shapes bts arms kernels timeout
  NAME=$1 SHAPES=$2 BTS=$3 ARMS=$4 KERNELS=$5 TIMEOUT=$6 SHOW=6 OUT=$OUT bash scripts/device/sweep_winners.sh
  echo "-- $1 done at $(( $(date +%s) - start )) s"
}
sweep lm16k 151936x4096 16384 adamw-int8,sgdm-bf16,lion-bf16 gluon_tall,gluon_coop,gluon_coop_tall 170
sweep sq16k 4096x4096 16384 adamw-int8,sgdm-bf16 gluon_tall,gluon_coop,gluon_coop_tall 60
sweep wide16k 12288x4096 16384 lion-bf16 gluon_tall,gluon_coop,gluon_coop_tall 40
sweep tall16k 4096x12288 16384 sgdm-bf16 gluon_tall,gluon_coop,gluon_coop_tall 40
sweep sq1k 4096x4096 1024 lion-bf16 gluon_ws,gluon_tall 50
sweep small1k 1024x4096 1024 sgdm-bf16 gluon_ws,gluon_tall 40
sweep lm1k 151936x4096 1024 adamw-int8 gluon_ws,gluon_tall,gluon_coop 80
(cd "$OUT" && rm -f */*.png && tar czf /tmp/call3.tgz . && find . -mindepth 1 -not -name winners.csv -delete \
  && mv /tmp/call3.tgz .)
