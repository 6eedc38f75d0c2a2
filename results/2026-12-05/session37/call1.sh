#!/usr/bin/env bash
# Session 37, device call 1: BLOCK_K 128 on the ping-pong kernel (configs.CANDIDATES: half the k-steps of a unit,
# so half the slab barriers and wgmma waits, a ring of three or four 48 KB stages).
# 1. its GPU tests (parity, poisoned tile, main loop only, traced, every tile config);
# 2. each BT <= 1024 miss's committed winner against itself with BLOCK_K 128 (config_ab.py, REFERENCE=winner, bits
#    first, arms interleaved; every (cell, arm) compiled first in parallel).
# On whichever card comes (an H100 borrows the H200's winners by architecture): device.txt names it.
#   bash results/2026-12-05/session37/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit --format=csv > $OUT/device.txt; cat $OUT/device.txt
start=$(date +%s)
timeout 150 python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "k128 and not every_rule" -n 8 -rf --tb=short -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $? ($(( $(date +%s) - start )) s)"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
mkdir -p $OUT/ab
REFERENCE=winner ROUNDS=3 VARY="block_k=128,num_stages=3,tile_ring=2;block_k=128,num_stages=4,tile_ring=2;block_k=128,num_stages=3,tile_ring=3" \
  JOBS=$'1024x4096:512,1024x4096:1024:sgdm-bf16,lion-bf16,adamw-bf16\n4096x4096:1024:adamw-bf16,lion-bf16' \
  WARM_TIMEOUT=200 JOB_TIMEOUT=200 OUT=$OUT/ab bash scripts/device/config_ab_jobs.sh
echo "call $(( $(date +%s) - start )) s"
(cd "$OUT" && tar czf /tmp/call1.tgz . && rm -rf "$OUT"/* && mv /tmp/call1.tgz "$OUT/")
