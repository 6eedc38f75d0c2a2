#!/usr/bin/env bash
# Session 23, prepared as call 4, not run (no machine; f2d4e32): Nsight per-SASS warp-stall samples of the step on two missing cells, to
# tell what the main loop waits on beside the other consumer's rule (slab barrier: data; wgmma wait:
# the tensor core) -- the "stretch" of sessions 19-22.
export PYTHONPATH=$PWD
CELLS="1024x4096:512:adamw-bf16 4096x4096:1024:adamw-bf16" GLUON_FLAGS=1 SOURCE=1 NCU_TIMEOUT=200 \
  bash scripts/device/ncu_kernel.sh
