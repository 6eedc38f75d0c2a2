#!/usr/bin/env bash
# Session 44, device call 7: where the 1024 x 4096 step's warps stall, against its main loop alone.
# Call 6 found no unit above 46-57% of its peak in the step: it is bound by latency and order. Nsight's
# per-SASS warp-stall samples (SourceCounters) of the step and of the main-loop-only kernel, SGD-m BT 512,
# summed per loop by scripts/sass_stalls.py (a main loop's wgmma waits vs its slab-barrier waits).
#   bash results/2026-12-06/session44/call7.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/ncu"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
for arm in step mainloop; do
  name=1024x4096_512_sgdm_$arm
  if [ $arm = step ]; then skip=2; flag=""; else skip=5; flag=--mainloop; fi
  timeout 150 ncu --clock-control none -k regex:fused_step -s $skip -c 1 --section WarpStateStats \
    --section SourceCounters -f -o "$OUT/ncu/$name" python3 scripts/device/ncu_kernel.py \
    --cell 1024x4096:512:sgdm-bf16 $flag > "$OUT/ncu/$name.log" 2>&1
  echo "[call7] $name exit $?"
  ncu -i "$OUT/ncu/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/${name}_sass.csv" 2>&1
  gzip -f "$OUT/ncu/${name}_sass.csv"
  echo "== $name"; python3 scripts/sass_stalls.py "$OUT/ncu/${name}_sass.csv.gz" 2>&1 | head -40
done
tar -C "$OUT" -czf "$OUT/ncu.tgz" ncu && rm -rf "$OUT/ncu"
