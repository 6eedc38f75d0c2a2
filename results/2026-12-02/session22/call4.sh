#!/usr/bin/env bash
# Session 22 call 4: call4/io_oob.py on the kernel with call4/oob_tiles.patch applied (the working tree
# at the call; the patch is not committed to the kernel): step vs the same step with its tile bytes
# in L2 (one set) vs out of L2 and HBM altogether (TMA zero-fill, dropped stores) vs its main loop vs
# a copy of the bytes.
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
CELLS=1024x4096:512,1024x4096:1024,4096x4096:512,4096x4096:1024,12288x4096:1024 ARMS=adamw-bf16,sgdm-bf16 \
  timeout 400 python3 results/2026-12-02/session22/call4/io_oob.py 2>&1 | grep -v Warn
echo "rc ${PIPESTATUS[0]}"
