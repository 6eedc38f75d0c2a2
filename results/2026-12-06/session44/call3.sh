#!/usr/bin/env bash
# Session 44, device call 3: FORGE_PDL=2, the next step's main loops under the last step's tail (probe).
# Calls 1-2 (session 43's call4.sh, then the grid) found the 1024 x 4096 step's excess over its main loop
# on-chip (L2-warm only 4-19% faster), and session 22's stamps put 3.5-8 us between the SMs' ends. At PDL 2
# only the tile producer waits for the previous grid, so a program placed on an SM the last step freed early
# streams its slabs and runs its first main loops at once (gluon_wgrad.PDL's comment says when that is safe).
# (a) GPU tests of the default path (the PDL helpers were refactored); (b) pdl_probe.py: bits of PDL 1 and 2
# equal, then per-call times at both, interleaved, in graphs of 1-12 calls and in the grid's graph.
# Ran on one H100 with the probe applied (not kept: no gain; PDL 1's path is main's, refactored into helpers):
#   git apply results/2026-12-06/session44/pdl_early_slabs.patch
#   bash results/2026-12-06/session44/call3.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
SELECT="back_to_back or (gluon_kernel_at_parity and ring)" WORKERS=8 TIMEOUT=120 OUT=$OUT \
  bash scripts/device/gluon_tests.sh
CELLS="1024x4096:512:sgdm-bf16;1024x4096:1024:sgdm-bf16;1024x4096:512:adamw-bf16;1024x4096:1024:adamw-bf16;4096x4096:1024:lion-bf16" \
  OUT=$OUT timeout 300 python3 results/2026-12-06/session44/pdl_probe.py > "$OUT/pdl_probe.log" 2>&1
echo "== pdl_probe rc $?"; grep -v Warning "$OUT/pdl_probe.log" | tail -40
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
