#!/usr/bin/env bash
# Session 24 call 3 (the tall int8 loop reverted: the kernel as at bdc729e): the poisoned-tile GPU tests, bf16
# and int8, on every Gluon config, against the committed kernel.
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 100 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "poisoned" -n 8 > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 2 "$OUT/tests.log"
grep FAILED "$OUT/tests.log" | head -5
