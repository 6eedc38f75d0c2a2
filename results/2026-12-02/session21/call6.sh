#!/usr/bin/env bash
# Session 21 call 6: which of the tile bytes stretch the step, the fills or the stores: call6/io_split.py
# on the kernel with call6/io_split.patch applied (the working tree at the call; the patch is not
# committed to the kernel). As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
export CELLS=4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:1024
for arm in adamw-bf16 sgdm-bf16 adamw-int8; do  # compile first, in parallel
  CELLS=$CELLS ARMS=$arm OUT=/tmp timeout 300 python3 results/2026-12-02/session21/call6/io_split.py > /dev/null 2>&1 &
done
wait
ARMS=adamw-bf16,sgdm-bf16,adamw-int8 timeout 400 python3 results/2026-12-02/session21/call6/io_split.py 2>&1 | grep -v Warn
