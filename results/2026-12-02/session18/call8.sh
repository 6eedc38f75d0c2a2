#!/usr/bin/env bash
# Session 18 call 8: the LM head at BT 16384 alone (every arm; in the grids it is the last cell and
# reads 0.94-1.01x its baseline, a different arm missing each time), then scripts/device/clock_probe.py
# (SM clock and power per arm, back to back: int8 vs bf16 where the cell is compute-bound).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 100 python3 -m forge_mcore.bench.kernel --out $OUT/lm16 --shapes 151936x4096 --bts 16384 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --reps 30 > $OUT/lm16.log 2>&1
echo "LM head rc $?"; grep "^| " $OUT/lm16.log | tail -n 4
timeout 90 python3 scripts/device/clock_probe.py > $OUT/clock_probe.log 2>&1
echo "clock probe rc $?"; tail -n 13 $OUT/clock_probe.log
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
