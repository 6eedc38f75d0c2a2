#!/usr/bin/env bash
# Session 45, device call 9 (what ran: an H100): the ping-pong configs swept (first_fill_after 2 twins among them) on 1024 x 4096 and
# 4096^2 at BT 512, every arm, beside the committed winners: what `--winners` commits for this card.
#   bash results/2026-12-06/session45/call9.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader
timeout ${SWEEP_TIMEOUT:-420} python3 -m forge_mcore.bench.kernel --out "$OUT/sweep512" --shapes 1024x4096,4096x4096 \
  --bts 512 --arms sgdm-bf16,lion-bf16,adamw-bf16,adamw-int8 --sweep --sweep-kernels gluon_ws > "$OUT/sweep512.log" 2>&1
echo "sweep rc $?"; grep -E "BT=" "$OUT/sweep512.log" | head -20; rm -f "$OUT"/sweep512/*.png
