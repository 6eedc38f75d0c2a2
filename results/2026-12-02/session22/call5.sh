#!/usr/bin/env bash
# Session 22 call 5: Nsight Compute on the step, its OOB twin (call4/oob_tiles.patch applied) and its main
# loop alone, AdamW bf16 4096^2 BT 512 and 1024 x 4096 BT 512: shared-memory bank reads/writes, L1/TEX and
# LSU shared wavefronts, tensor pipe, TMA-related stalls. Writes $OUT/ncu.tgz (reports + text).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p $OUT/ncu
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
M=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,dram__bytes.sum,gpu__time_duration.sum,smsp__inst_executed.sum
for cell in 4096x4096:512:adamw-bf16 1024x4096:512:adamw-bf16; do
  for mode in step oob mainloop; do
    skip=2; [ $mode = mainloop ] && skip=5
    name=$(echo $cell | tr ':' '_')_$mode
    timeout 120 ncu --clock-control none -k regex:fused_step -s $skip -c 1 --metrics $M \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Chart -f -o $OUT/ncu/$name \
      python3 results/2026-12-02/session22/call5/ncu_oob.py $cell $mode > $OUT/ncu/$name.log 2>&1
    echo "== $name exit $?"
    ncu -i $OUT/ncu/$name.ncu-rep --page details > $OUT/ncu/$name.txt 2>&1
    ncu -i $OUT/ncu/$name.ncu-rep --page raw --csv > $OUT/ncu/${name}_raw.csv 2>&1
    grep -E "hmma|data_bank|wavefronts|l1tex__throughput|lts__t_bytes|dram__bytes|gpu__time|inst_executed.sum|Stall|No Eligible|Issued Warp" $OUT/ncu/$name.txt | head -30
  done
done
tar -C $OUT -czf $OUT/ncu.tgz ncu && rm -rf $OUT/ncu
