#!/usr/bin/env bash
# Session 18 call 6: re-sweep, on the wide-wgmma kernel, the BT <= 1024 cells nearest 60% of floor
# (4096^2 at BT 512/1024 for AdamW bf16/int8, SGD-m, Lion; AdamW bf16 on 12288x4096 and 4096x12288
# at BT 1024): ping-pong and tall configs. --winners on the device; winners.csv comes back in $OUT.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sw4k --shapes 4096x4096 --bts 512,1024 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_ws \
  --reps 30 > $OUT/sw4k.log 2>&1
echo "4096^2 sweep rc $?"; grep "^| " $OUT/sw4k.log | tail -n 8
timeout 90 python3 -m forge_mcore.bench.kernel --out $OUT/sw12k --shapes 12288x4096,4096x12288 --bts 1024 \
  --arms adamw-bf16 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_ws --reps 30 > $OUT/sw12k.log 2>&1
echo "12288 sweep rc $?"; grep "^| " $OUT/sw12k.log | tail -n 2
for d in sw4k sw12k; do python3 -m forge_mcore.bench.kernel --winners $OUT/$d/kernel.csv 2>&1 | tail -n 1; done
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
rm -f $OUT/sw*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
