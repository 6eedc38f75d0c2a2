#!/usr/bin/env bash
# Session 45, device calls 15 and 16: slab_trace.py (call 16 with the raw traces and the tile events by quarter), on a copy of the tree with slab_trace.patch applied (the probe's
# stamps: each slab's load, its consumer's wait and the wait's return; each tile-ring half's store read and fill).
#   bash results/2026-12-06/session45/call15.sh     (device, a copy of the repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
patch -p1 < results/2026-12-06/session45/slab_trace.patch || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python3 results/2026-12-06/session45/slab_trace.py 2>&1 | grep -v Warn | tee "$OUT/slab_trace.log"
