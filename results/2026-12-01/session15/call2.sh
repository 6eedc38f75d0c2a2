#!/usr/bin/env bash
# Session 15, device call 2: ring2 = the sub-tile ring with ping-pong/cooperative units releasing both
# slots after the consumer's next first wgmma (only tall units release early). Its Gluon GPU tests,
# bits vs HEAD (ab_base), A/B against base and session 14's ring, tall/ping-pong sweeps at BT 512/1024
# in ring2 and base, and the timeline of tall units in ring2.
set -u
OUT=${OUT:-/tmp/out}; T0=$SECONDS
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
(cd ab_ring2 && OUT=$OUT TIMEOUT=200 bash ../scripts/device/gluon_tests.sh)
echo "[call2] tests done at $((SECONDS - T0)) s"
export FORGE_AUTOTUNE=0
timeout 60 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py save ab_ring2 /tmp/r2.pt >> $OUT/bits.log 2>&1
python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/r2.pt 2>&1 | cut -c1-120 | tee $OUT/bits.txt
echo "[call2] bits done at $((SECONDS - T0)) s"
TREES="ring2:ab_ring2 ring:ab_subtile_ring ring2b:ab_ring2" RUN_TIMEOUT=80 \
  ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt
mkdir -p $OUT/ab && for r in new ring2 ring ring2b new2; do cp $OUT/$r/kernel.csv $OUT/ab/$r.csv; rm -rf $OUT/$r; done
cat $OUT/ab.txt
echo "[call2] ab done at $((SECONDS - T0)) s"
for t in ab_ring2 ab_base; do
  (cd $t && timeout 100 python3 -m forge_mcore.bench.kernel --out $OUT/sw_$t --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
    --bts 512,1024 --arms adamw-bf16,sgdm-bf16 --sweep --sweep-kernels gluon_tall,gluon_ws --reps 30 > $OUT/sw_$t.log 2>&1; echo "[call2] sweep $t rc $?")
  rm -f $OUT/sw_$t/*.png
done
echo "[call2] sweeps done at $((SECONDS - T0)) s"
(cd ab_ring2 && timeout 90 python3 -m forge_mcore.bench.timeline --out $OUT/tl --shapes 4096x4096 --bts 512,1024 \
  --arms adamw-bf16 --kernels gluon_tall --plots 2 > $OUT/tl.log 2>&1; echo "[call2] timeline rc $?")
tail -n 30 $OUT/tl.log
tar czf $OUT/call2.tgz -C $OUT --exclude call2.tgz . && find $OUT -mindepth 1 ! -name call2.tgz ! -name ab.txt -delete
echo "[call2] end at $((SECONDS - T0)) s"
