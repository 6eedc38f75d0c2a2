#!/usr/bin/env bash
# Session 18's first device call (written in session 17, not run). Before it, locally:
#   patch -p1 < results/2026-12-02/session17/next/int8_tall.patch
#   python -m pytest -q tests/unit/test_gluon_dispatch.py tests/unit/test_winners.py -n 2
#   python scripts/compile_check.py --gluon --quick     (int8 tall: 128-136 B of stack, session 17)
# 1. the Gluon GPU tests with int8 states allowed on tall tiles (the patch);
# 2. scripts/device/timing_context.py: the step's time after each kind of arm (the interleaving question);
# 3. sweeps where BT >= 4096 still misses: int8 on tall (shared-buffer s5/s6 and s4/s5) vs cooperative at
#    BT 4096/16384; the LM head at BT 4096 with the shared-buffer configs; --winners for call 2's grid.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tests && OUT=$OUT/tests TIMEOUT=220 bash scripts/device/gluon_tests.sh
timeout 90 python3 scripts/device/timing_context.py > $OUT/timing_context.log 2>&1
echo "timing_context rc $?"; tail -n 16 $OUT/timing_context.log
timeout 150 python3 -m forge_mcore.bench.kernel --out $OUT/sw8 --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 4096,16384 --arms adamw-int8 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_coop \
  --reps 30 > $OUT/sw8.log 2>&1
echo "int8 sweep rc $?"; grep "^| " $OUT/sw8.log | tail -n 8
timeout 120 python3 -m forge_mcore.bench.kernel --out $OUT/swlm --shapes 151936x4096 --bts 4096 \
  --arms adamw-bf16,adamw-int8,lion-bf16,sgdm-bf16 --sweep --sweep-configs all --sweep-kernels gluon_tall,gluon_coop \
  --reps 10 > $OUT/swlm.log 2>&1
echo "LM head sweep rc $?"; grep "^| " $OUT/swlm.log | tail -n 4
for d in sw8 swlm; do python3 -m forge_mcore.bench.kernel --winners $OUT/$d/kernel.csv 2>&1 | tail -n 1; done
cp forge_mcore/kernels/winners.csv $OUT/winners.csv
rm -f $OUT/sw*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
