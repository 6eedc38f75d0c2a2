#!/usr/bin/env bash
# Session 16, device call 3: int8 codes decoded by one byte permute each (this tree, 5a0d421;
# ab_base = 153d446 (git archive 153d446 forge_mcore), call 2's codec): Gluon GPU tests, bits vs HEAD, A/B at BT 512/1024,
# then a sweep of the int8 arm's Gluon configs (ping-pong, cooperative) for winners.csv.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
mkdir -p $OUT/tests
OUT=$OUT/tests TIMEOUT=${TEST_TIMEOUT:-200} bash scripts/device/gluon_tests.sh
timeout 120 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 120 python3 scripts/device/step_bits.py save . /tmp/n.pt >> $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/n.pt >> $OUT/bits.log 2>&1
echo "bits rc $?"; tail -n 4 $OUT/bits.log | cut -c1-80
RUN_TIMEOUT=70 ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
timeout ${SWEEP_TIMEOUT:-200} python3 -m forge_mcore.bench.kernel --out $OUT/sw \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024,4096 --arms adamw-int8 \
  --sweep --sweep-configs all --sweep-kernels gluon_ws,gluon_coop --reps 30 > $OUT/sw.log 2>&1
echo "sweep rc $?"; tail -n 2 $OUT/sw.log
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
