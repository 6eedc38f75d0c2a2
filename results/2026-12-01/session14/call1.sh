#!/usr/bin/env bash
# Session 14, device call 1: session 13's two next/ patches. Trees (built before the call):
#   bash scripts/ab_trees.sh results/2026-12-01/session13/next/*.patch; mv to ab_i8u (int8 rule loop in
#   ping-pong only) and ab_rel (ping-pong releases after the first wgmma); ab_both = both patches;
#   tests/ and pyproject.toml copied into each tree.
# Gluon GPU tests in rel and both, bits vs base, same-call A/B of all four trees, timeline of rel.
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
K='(gluon or main_loop or poisoned or every_rule or every_codec) and not 151936'
for t in rel both; do
  (cd ab_$t && timeout 300 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
     -k "$K" -n 6 > $OUT/tests_$t.log 2>&1; echo "rc $?" >> $OUT/tests_$t.log) &
done
wait
tail -3 $OUT/tests_*.log
for t in base i8u rel both; do (cd ab_$t && python3 ../results/2026-12-01/session12/call10/bits.py /tmp/bits_$t.pt > /tmp/bits_$t.log 2>&1); done
python3 - > $OUT/bits.txt 2>&1 <<'PY'
import torch
base = torch.load("/tmp/bits_base.pt")
for t in ("i8u", "rel", "both"):
    other = torch.load(f"/tmp/bits_{t}.pt")
    for k, ts in base.items():
        print(t, k, "equal" if all(torch.equal(a, b) for a, b in zip(ts, other[k])) else "DIFF")
PY
cat $OUT/bits.txt
TREES="base:ab_base i8u:ab_i8u rel:ab_rel both:ab_both" ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024,4096 --arms adamw-bf16,adamw-int8,sgdm-bf16 --reps 30" RUN_TIMEOUT=100 bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
(cd ab_rel && timeout 100 python3 -m forge_mcore.bench.timeline --out $OUT/tl_rel --shapes 4096x4096 --bts 512,1024 \
   --arms adamw-bf16,adamw-int8 --plots 1 > $OUT/tl_rel.log 2>&1; rm -f $OUT/tl_rel/traces.pt)
cd $OUT && tar czf runs.tgz */ *.log && rm -rf */ *.log
