#!/usr/bin/env bash
# Session 18 call 3: one m64n128 wgmma per 64-row block instead of two m64n64 (wide_mma.patch, the
# working tree; ab_base = HEAD) -- A/B at BT 512/1024/4096 for AdamW bf16/int8 and SGD-m (code_ab.sh:
# new, base, new2), then the int8 LM head at BT 16384 swept tall vs cooperative (the last BT >= 4096 miss).
#   local: bash scripts/ab_trees.sh     (ab_base)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
# a quick parity check of the patch first (the whole Gluon suite is call 4)
timeout 120 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -k "gluon_kernel_at_parity" \
  -n 8 > $OUT/parity.log 2>&1; echo "parity rc $?"; tail -n 2 $OUT/parity.log
TREES="base:ab_base" RATIO=adamw-int8/adamw-bf16 RUN_TIMEOUT=110 \
  ARGS="--shapes 4096x4096,12288x4096,1024x4096 --bts 512,1024,4096 --arms adamw-bf16,sgdm-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
grep -v "/" $OUT/ab.txt
timeout 100 python3 -m forge_mcore.bench.kernel --out $OUT/swlm16 --shapes 151936x4096 --bts 16384 --arms adamw-int8 \
  --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_coop --reps 10 > $OUT/swlm16.log 2>&1
echo "LM head int8 sweep rc $?"; grep "^| " $OUT/swlm16.log | tail -n 2
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
