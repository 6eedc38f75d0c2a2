#!/usr/bin/env bash
# Session 15, device call 3: ring3 = ring2 with each consumer's slot indices known at compile time.
# Its Gluon GPU tests, bits vs HEAD (ab_base), A/B (new, ring3, ring3b, new2) on the committed
# winners, and tall/ping-pong sweeps at BT 512/1024 in ring3 (for winners.csv if it lands).
set -u
OUT=${OUT:-/tmp/out}; T0=$SECONDS
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
(cd ab_ring3 && OUT=$OUT TIMEOUT=200 bash ../scripts/device/gluon_tests.sh)
echo "[call3] tests done at $((SECONDS - T0)) s"
export FORGE_AUTOTUNE=0
timeout 60 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py save ab_ring3 /tmp/r3.pt >> $OUT/bits.log 2>&1
python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/r3.pt 2>&1 | cut -c1-120 | tee $OUT/bits.txt
echo "[call3] bits done at $((SECONDS - T0)) s"
TREES="ring3:ab_ring3 ring3b:ab_ring3" RUN_TIMEOUT=80 \
  ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt
cat $OUT/ab.txt
echo "[call3] ab done at $((SECONDS - T0)) s"
(cd ab_ring3 && timeout 100 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 512,1024 --arms adamw-bf16,sgdm-bf16,lion-bf16 --sweep --sweep-kernels gluon_tall,gluon_ws --reps 30 > $OUT/sweep.log 2>&1; echo "[call3] sweep rc $?")
rm -f $OUT/sweep/*.png
echo "[call3] sweep done at $((SECONDS - T0)) s"
cd $OUT && tar czf /tmp/call3.tgz . && rm -rf $OUT/* && mv /tmp/call3.tgz $OUT/ && cp /tmp/call3_ab.txt $OUT/ 2>/dev/null
echo "[call3] end at $((SECONDS - T0)) s"
