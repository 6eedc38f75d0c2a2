#!/usr/bin/env bash
# Session 16, device call 1: session 15's tall_pair_per_pass.patch (tree ab_tall_pair_per_pass, built by
# scripts/ab_trees.sh with tests/, pyproject.toml copied in): Gluon GPU tests in the tree, bits vs
# main, then A/B new/base/pair/pair2/new2 on BT 512/1024.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tests
(cd ab_tall_pair_per_pass && PYTHONPATH=$PWD OUT=$OUT/tests TIMEOUT=${TEST_TIMEOUT:-200} bash ../scripts/device/gluon_tests.sh)
timeout 120 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 120 python3 scripts/device/step_bits.py save ab_tall_pair_per_pass /tmp/p.pt >> $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/p.pt >> $OUT/bits.log 2>&1
echo "bits rc $?"; tail -n 5 $OUT/bits.log
TREES="pair:ab_tall_pair_per_pass pair2:ab_tall_pair_per_pass" RUN_TIMEOUT=80 \
  ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
