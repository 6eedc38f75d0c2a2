#!/usr/bin/env bash
# Session 16, device call 2: the int8 codec's shorter instruction path (this tree, uncommitted at the
# time; ab_base = HEAD 6033595 from scripts/ab_trees.sh): Gluon GPU tests, bits vs main, A/B.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tests
OUT=$OUT/tests TIMEOUT=${TEST_TIMEOUT:-220} bash scripts/device/gluon_tests.sh
timeout 120 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 120 python3 scripts/device/step_bits.py save . /tmp/n.pt >> $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/n.pt >> $OUT/bits.log 2>&1
echo "bits rc $?"; tail -n 4 $OUT/bits.log
RUN_TIMEOUT=100 ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024,4096 --arms adamw-int8,adamw-bf16 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
