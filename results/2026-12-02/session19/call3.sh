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
timeout 400 python3 -m forge_mcore.bench.kernel --out $OUT/sw --shapes 4096x4096,12288x4096,151936x4096 \
  --bts 4096,16384 --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --sweep --sweep-configs all \
  --sweep-kernels gluon_tall,gluon_coop,gluon_coop_tall --reps 20 > $OUT/sw.log 2>&1
echo "sweep rc $?"; grep "^| " $OUT/sw.log | tail -n 24
python3 -m forge_mcore.bench.kernel --winners $OUT/sw/kernel.csv 2>&1 | tail -n 1
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
rm -f $OUT/sw/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
