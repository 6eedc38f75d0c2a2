#!/usr/bin/env bash
# Session 44, device call 4: call 3 again, timed right. In call 3 each weight's later steps replayed the
# launch of its first one (ops._Replay keeps its kernel), which ran at PDL 1, so both arms timed PDL 1;
# pdl_probe.py now passes the config explicitly, so every call takes the full path and reads the mode.
# Its bits check was sound (each arm's weights were first stepped at their own mode) and passed.
#   patch -p1 < results/2026-12-06/session44/pdl_early_slabs.patch && bash results/2026-12-06/session44/call4.sh
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
CELLS="1024x4096:512:sgdm-bf16;1024x4096:1024:sgdm-bf16;1024x4096:512:adamw-bf16;1024x4096:1024:adamw-bf16;4096x4096:1024:lion-bf16" \
  OUT=$OUT timeout 300 python3 results/2026-12-06/session44/pdl_probe.py > "$OUT/pdl_probe.log" 2>&1
echo "== pdl_probe rc $?"; grep -v Warning "$OUT/pdl_probe.log" | tail -40
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
