#!/usr/bin/env bash
# Session 19's first device call (written in session 18, not run; cold: ~100 s start + ~330 s):
# 1. scripts/device/clock_probe.py with the main-loop arms: does FORGE's main loop alone run at a lower
#    clock than cuBLAS under the power cap (its slab traffic: 128 x 128 tiles, no multicast), or only
#    the full step (the epilogue's HBM traffic)?
# 2. BT 4096/16384 re-swept on the wide-wgmma kernel (the winners there were swept on two m64n64
#    wgmma per block), every arm, tall vs cooperative; --winners; winners.csv back in $OUT;
# 3. the phase timeline of AdamW bf16 at BT 512/1024 (ping-pong and tall) on the wide kernel, 4096^2 and
#    1024 x 4096 (every 1024 x 4096 cell misses 60%: 42-54%; at BT 512 the main loop alone takes 12.8 us, cuBLAS 11.4, for 5.4 us of FLOPs at 800 TFLOP/s).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 100 python3 scripts/device/clock_probe.py > $OUT/clock_probe.log 2>&1
echo "clock probe rc $?"; tail -n 16 $OUT/clock_probe.log
timeout 200 python3 -m forge_mcore.bench.kernel --out $OUT/sw4k --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 4096,16384 --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --sweep --sweep-configs all \
  --sweep-kernels gluon_tall,gluon_coop --reps 20 > $OUT/sw4k.log 2>&1
echo "BT >= 4096 sweep rc $?"; grep "^| " $OUT/sw4k.log | tail -n 32
python3 -m forge_mcore.bench.kernel --winners $OUT/sw4k/kernel.csv 2>&1 | tail -n 1
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
timeout 100 python3 -m forge_mcore.bench.timeline --out $OUT/timeline --shapes 4096x4096,1024x4096 --bts 512,1024 \
  --arms adamw-bf16 --kernels gluon_ws,gluon_tall --plots 4 > $OUT/timeline.log 2>&1
echo "timeline rc $?"; tail -n 8 $OUT/timeline.log
rm -f $OUT/timeline/traces.pt $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
