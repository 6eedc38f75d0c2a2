#!/usr/bin/env bash
# Session 25 call 6 (call 5's tree, its winners committed): the Gluon parity, poisoned-tile and every-config GPU tests
# on every config but the new one (call 5 ran its 70): FAST_DIVISION threaded through the kernel beside MASK_EDGES.
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 200 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider --dist loadgroup -n 8 \
  -k "(gluon_kernel_at_parity or poisoned or every_tile_config) and not fastdiv" > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
