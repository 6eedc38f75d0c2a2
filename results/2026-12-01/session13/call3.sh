#!/usr/bin/env bash
# Session 13, device call 3: int8 row scales before the main loop (i8s), + int8 conversions on the
# fp32/integer pipes (i8sc), + the rule's two halves as a runtime loop (loop): parity tests in the loop
# tree, bits against HEAD, same-call A/B, timeline of the loop tree.
set -u
OUT=${OUT:-/tmp/out}; R=results/2026-12-01/session13
(cd ab_loop && timeout 330 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
   -k "(gluon or main_loop or poisoned or every_rule or every_codec) and not 151936" -n 8 > $OUT/tests_loop.log 2>&1; echo "rc $?" >> $OUT/tests_loop.log)
for t in base i8sc loop; do (cd ab_$t && python3 ../results/2026-12-01/session12/call10/bits.py /tmp/bits_$t.pt > /tmp/bits_$t.log 2>&1); done
python3 - > $OUT/bits.txt 2>&1 <<'PY'
import torch
base = torch.load("/tmp/bits_base.pt")
for t in ("i8sc", "loop"):
    other = torch.load(f"/tmp/bits_{t}.pt")
    for k, ts in base.items():
        print(t, k, "equal" if all(torch.equal(a, b) for a, b in zip(ts, other[k])) else "DIFF")
PY
TREES="i8s:ab_i8s i8sc:ab_i8sc loop:ab_loop" ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024,4096 --arms adamw-bf16,adamw-int8,sgdm-bf16 --reps 30" RUN_TIMEOUT=120 bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
(cd ab_loop && timeout 120 python3 -m forge_mcore.bench.timeline --out $OUT/tl_loop --shapes 4096x4096 --bts 512,1024 \
   --arms adamw-bf16,adamw-int8 --plots 1 > $OUT/tl_loop.log 2>&1; rm -f $OUT/tl_loop/traces.pt)
cd $OUT && tar czf runs.tgz */ *.log && rm -rf */ *.log
