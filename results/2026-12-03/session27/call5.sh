#!/usr/bin/env bash
# Session 27, call 5: call 4's ring tests ran out of time with ~2 of ~284 left (282 passed, no failure
# printed; a compile of every ping-pong config per arm ran beside them). (1) The two-buffer ring's
# GPU tests alone, verbose (a hung test is the one without a PASSED line), then, whatever they say,
# (2) every ping-pong config swept on 1024 x 4096 and 4096² at BT 512/1024 (the cells where the slab
# ring's depth moved the step in session 26), each with its own time limit. Tarred.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
timeout 130 python3 -m pytest -v -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 14 \
  -k "ring2" -rf --tb=line -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $?"; grep -c PASSED "$OUT/tests.log"; grep -E "FAILED|passed|failed" "$OUT/tests.log" | tail -5
timeout 200 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 1024x4096,4096x4096 --bts 512,1024 \
  --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 --sweep --sweep-configs all --sweep-kernels gluon_ws \
  > $OUT/sweep.log 2>&1
echo "sweep rc $?"; rm -f $OUT/sweep/*.png
cd $OUT && tar czf /tmp/call5.tgz . && rm -rf $OUT/* && mv /tmp/call5.tgz $OUT/
