#!/usr/bin/env bash
# Session 14, device call 6: the weight/state buffers as a ring of four 64x64 sub-tile slots shared in
# unit order (a tall unit's second rows load while the rule runs on its first). ab_base = f07138d's package.
# Gluon GPU tests, bits vs base (twice), same-call A/B, timeline.
set -u
OUT=${OUT:-/tmp/out}
export FORGE_AUTOTUNE=0
TIMEOUT=300 bash scripts/device/gluon_tests.sh  # (the same command, factored out after the call)
python3 scripts/device/step_bits.py save ab_base /tmp/b.pt
python3 scripts/device/step_bits.py save . /tmp/n1.pt
python3 scripts/device/step_bits.py save . /tmp/n2.pt
python3 scripts/device/step_bits.py compare /tmp/b.pt /tmp/n1.pt /tmp/n2.pt | tee $OUT/bits.txt
ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024,4096 --arms adamw-bf16,adamw-int8,sgdm-bf16 --reps 30" RUN_TIMEOUT=100 bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
timeout 100 python3 -m forge_mcore.bench.timeline --out $OUT/tl --shapes 4096x4096 --bts 512,1024 \
   --arms adamw-bf16 --kernels gluon_ws,gluon_tall --plots 4 > $OUT/tl.log 2>&1; echo "timeline rc $?"
rm -f $OUT/tl/traces.pt
grep '^{' $OUT/tl.log | cut -c1-900
cd $OUT && tar czf runs.tgz new base new2 *.log && rm -rf new base new2 *.log
