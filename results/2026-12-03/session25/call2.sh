#!/usr/bin/env bash
# Session 25 call 2 (call 1's tree, the fp8 codec's scale division back on div_rn: x / 448 by the corrected product
# missed 599,186 operands in call 1): the division tests again, the acceptance grid on the committed winners
# (results/2026-12-01/session15/call4.sh: $OUT/call4.tgz), then session 23's prepared Nsight call (per-SASS
# warp-stall samples of 1024 x 4096 BT 512 and 4096² BT 1024 AdamW bf16: $OUT/ncu.tgz).
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
timeout 60 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -k division \
  > "$OUT/tests.log" 2>&1; echo "tests rc $?"; tail -n 1 "$OUT/tests.log"
GRID_TIMEOUT=280 bash results/2026-12-01/session15/call4.sh
CELLS="1024x4096:512:adamw-bf16 4096x4096:1024:adamw-bf16" GLUON_FLAGS=1 SOURCE=1 NCU_TIMEOUT=90 \
  bash scripts/device/ncu_kernel.sh
