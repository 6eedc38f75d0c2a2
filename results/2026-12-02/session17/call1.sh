#!/usr/bin/env bash
# Session 17 call 1 (session 16's next/call1.sh, first half): Lion swept on ping-pong and tall tiles
# at BT 512/1024 on main; rule_instructions.patch's Gluon GPU tests and bits in ab_rules.
# Trees, locally: see results/2026-12-02/session16/next/call1.sh's header.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 170 python3 -m forge_mcore.bench.kernel --out $OUT/sw_lion \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms lion-bf16 \
  --sweep --sweep-configs all --sweep-kernels gluon_ws,gluon_tall --reps 30 > $OUT/sw_lion.log 2>&1
echo "lion sweep rc $?"; tail -n 3 $OUT/sw_lion.log
TREE=ab_rules BASE=ab_base OUT=$OUT bash scripts/device/check_tree.sh
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
