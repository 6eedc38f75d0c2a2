#!/usr/bin/env bash
# Session 44, device call 6: which unit of the SM is busiest in the 1024 x 4096 step, against its main loop alone?
# Call 1 (H200) found the step's excess over its main loop mostly on-chip. Nsight Compute's throughput
# breakdowns (every sub-unit's % of its peak: shared-memory and LSU pipes, L1 <-> crossbar, L2, tensor pipe)
# of the step and of the same kernel with its epilogue compiled out, SGD-m at BT 512 and 1024.
#   bash results/2026-12-06/session44/call6.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/ncu"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
METRICS=breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,\
gpu__time_duration.sum
reps=()
for bt in 512 1024; do
  for arm in step mainloop; do
    name=1024x4096_${bt}_sgdm_$arm
    if [ $arm = step ]; then skip=2; flag=""; else skip=5; flag=--mainloop; fi
    timeout 120 ncu --clock-control none -k regex:fused_step -s $skip -c 1 --metrics "$METRICS" -f -o "$OUT/ncu/$name" python3 scripts/device/ncu_kernel.py --cell 1024x4096:$bt:sgdm-bf16 $flag \
      > "$OUT/ncu/$name.log" 2>&1
    echo "[call6] $name exit $?"; grep -E "ERR|rror" "$OUT/ncu/$name.log" | head -3
    if [ ! -f "$OUT/ncu/$name.ncu-rep" ]; then  # breakdown metrics refused: every section instead
      timeout 150 ncu --clock-control none -k regex:fused_step -s $skip -c 1 --set full -f -o "$OUT/ncu/$name" \
        python3 scripts/device/ncu_kernel.py --cell 1024x4096:$bt:sgdm-bf16 $flag > "$OUT/ncu/$name.log" 2>&1
      echo "[call6] $name --set full exit $?"
    fi
    reps+=("$OUT/ncu/$name.ncu-rep")
  done
done
python3 results/2026-12-06/session44/ncu_breakdown.py "${reps[@]}" 2>&1 | tee "$OUT/breakdown.txt"
tar -C "$OUT" -czf "$OUT/ncu.tgz" ncu && rm -rf "$OUT/ncu"
