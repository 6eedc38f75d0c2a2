#!/usr/bin/env bash
# Session 17 call 5: tall ping-pong with one tile buffer for both consumers (epilogue_stages 1,
# gluon_wgrad._ws_fetch_units_shared; configs tall s5/s6 e1): the Gluon GPU tests on this checkout,
# the bits of the committed configs against HEAD before the change (ab_base), then tall/cooperative
# sweeps at BT 4096/16384 (AdamW bf16, Lion, SGD-m), applied with --winners for call 6's grid.
#   local, before: rm -rf ab_base && mkdir ab_base && git archive 9585387 forge_mcore | tar -x -C ab_base
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
TREE=. BASE=ab_base OUT=$OUT TEST_TIMEOUT=220 bash scripts/device/check_tree.sh
timeout 150 python3 -m forge_mcore.bench.kernel --out $OUT/sw --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 4096,16384 --arms adamw-bf16,lion-bf16,sgdm-bf16 --sweep --sweep-configs all \
  --sweep-kernels gluon_tall,gluon_coop --reps 30 > $OUT/sw.log 2>&1
echo "sweep rc $?"; grep "^| " $OUT/sw.log | tail -n 24
timeout 90 python3 -m forge_mcore.bench.kernel --out $OUT/swlm --shapes 151936x4096 --bts 16384 \
  --arms adamw-bf16,lion-bf16,sgdm-bf16 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_coop \
  --reps 10 > $OUT/swlm.log 2>&1
echo "lm sweep rc $?"; grep "^| " $OUT/swlm.log | tail -n 3
for d in sw swlm; do python3 -m forge_mcore.bench.kernel --winners $OUT/$d/kernel.csv 2>&1 | tail -n 1; done
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
rm -f $OUT/sw*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
