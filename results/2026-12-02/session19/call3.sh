#!/usr/bin/env bash
# Session 19 call 3: cooperative 256-row tiles (gluon_coop_tall) at BT 4096/16384, where the cooperative
# schedule's lost overlap costs least and call 1's clock probe found our main loop alone at a lower SM
# clock than cuBLAS (more slab bytes per FLOP): a sweep against the tall and cooperative configs in one
# process, every arm, on 4096^2, 12288 x 4096 and the LM head (its BT 16384 cells are the misses);
# --winners; winners.csv back in $OUT.
# Run as: mkdir -p $OUT && OUT=$OUT timeout 590 bash results/2026-12-02/session19/call3.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
SHAPES=4096x4096,12288x4096,151936x4096 BTS=4096,16384 ARMS=adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 \
  KERNELS=gluon_tall,gluon_coop,gluon_coop_tall TIMEOUT=400 SHOW=24 OUT=$OUT bash scripts/device/sweep_winners.sh
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
