#!/usr/bin/env bash
# Session 15, device call 1: session 14's sub-tile ring (results/2026-12-01/session14/next/subtile_ring.patch)
# in tree ab_subtile_ring: its Gluon GPU tests (also checks f07138d's int8-on-tall test fix), bits
# against HEAD's package (ab_base), A/B on the committed winners, and the tall configs swept at BT 512.
#   local: bash scripts/ab_trees.sh results/2026-12-01/session14/next/subtile_ring.patch; copy tests/,
#   pyproject.toml and scripts/compile_check.py into each tree
set -u
OUT=${OUT:-/tmp/out}; T0=$SECONDS
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
(cd ab_subtile_ring && OUT=$OUT TIMEOUT=220 bash ../scripts/device/gluon_tests.sh)
echo "[call1] tests done at $((SECONDS - T0)) s"
export FORGE_AUTOTUNE=0
timeout 60 python3 scripts/device/step_bits.py save ab_base /tmp/b.pt > $OUT/bits.log 2>&1
timeout 60 python3 scripts/device/step_bits.py save ab_subtile_ring /tmp/r.pt >> $OUT/bits.log 2>&1
python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/r.pt 2>&1 | tee $OUT/bits.txt
echo "[call1] bits done at $((SECONDS - T0)) s"
TREES="ring:ab_subtile_ring" RUN_TIMEOUT=80 ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh | tee $OUT/ab.txt
echo "[call1] ab done at $((SECONDS - T0)) s"
left=$((570 - (SECONDS - T0)))
for t in ab_base ab_subtile_ring; do
  (cd $t && timeout $((left / 2)) python3 -m forge_mcore.bench.kernel --out $OUT/tall_$t --shapes 4096x4096,12288x4096 \
    --bts 512 --arms adamw-bf16 --sweep --sweep-kernels gluon_tall --reps 30 > $OUT/tall_$t.log 2>&1; echo "[call1] tall $t rc $?")
  rm -f $OUT/tall_$t/*.png
done
grep "gluon_tall" $OUT/tall_*/sweep.csv | cut -c1-200
echo "[call1] end at $((SECONDS - T0)) s"
