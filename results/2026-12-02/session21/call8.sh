#!/usr/bin/env bash
# Session 21 call 8: the tile producer issues each fill's TMA stores itself, once the consumer has
# written the buffer, and waits for them before the next fill into it; the consumer never waits on
# stores (before: store_wait(0) in its next main loop, after the first wgmma). Call 6 put the stores
# at 15-20 us of the 4096^2 BT 512 AdamW step. The working tree at the call (the patch beside this
# script) against ab_base (HEAD's package, built with `git archive HEAD forge_mcore`): new kernels
# compiled first in parallel, a subset of the Gluon GPU tests, then scripts/device/code_ab.sh. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
for cell in 4096x4096:adamw-bf16 4096x4096:sgdm-bf16 1024x4096:adamw-bf16 1024x4096:sgdm-bf16; do
  timeout 100 python3 -m forge_mcore.bench.kernel --out /tmp/warm_${cell//:/_} --shapes ${cell%%:*} --bts 512,1024 \
    --arms ${cell##*:} --reps 1 > /dev/null 2>&1 &
done
wait
timeout 100 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 8 \
  -k "gluon_kernel_at_parity or poisoned or traced" > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 2 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
ARGS="--shapes 4096x4096,1024x4096 --bts 512,1024 --arms adamw-bf16,sgdm-bf16 --reps 20" RATIO=sgdm-bf16/adamw-bf16 \
  RUN_TIMEOUT=90 bash scripts/device/code_ab.sh
