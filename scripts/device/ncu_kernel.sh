#!/usr/bin/env bash
# Nsight Compute profiles of the fused step, one text report per cell, kernel choice and arm.
#   device call: `bash scripts/device/ncu_kernel.sh` (env: CELLS, GLUON_FLAGS, ARMS, NCU_TIMEOUT per profile,
#   SAMPLING: --warp-sampling-interval, 0 = every 32 cycles; REPLACE: TileConfig fields replaced in the winner,
#   e.g. num_stages=6; SECTIONS: the ncu sections, default the seven below)
# Each cell runs with the tuned config (FORGE_GLUON=1, the Gluon kernel where it applies) and the Triton
# kernel (FORGE_GLUON=0); ARMS="step mainloop" also profiles the same kernel and config with its epilogue
# compiled out (`ncu_kernel.py --mainloop`), ARMS=nan the step with a NaN dY (every tile's rule skipped, its
# tiles still moved: `ncu_kernel.py --nan-grad`). The clocks are left alone (--clock-control none, METHOD.md).
# Writes $OUT/ncu.tgz: per profile <name>.ncu-rep, <name>.txt (every section's details) and, with
# SOURCE=1, <name>_sass.csv.gz (per SASS instruction: warp-stall samples by reason, from SourceCounters),
# whose loops `scripts/sass_stalls.py` sums (printed here). Set SAMPLING=0 for stall samples: ncu's automatic
# interval took ~3 samples per SM sub-partition of a 17 us step (session 45), at nearly the same cycles on every
# SM, so whole phases (a consumer's rule) went unsampled.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/ncu"
export PYTHONPATH=$PWD:${PYTHONPATH:-} FORGE_AUTOTUNE=0
CELLS=${CELLS:-"4096x4096:512:adamw-bf16 1024x4096:512:adamw-bf16"}
for cell in $CELLS; do
  for gluon in ${GLUON_FLAGS:-1 0}; do
    for arm in ${ARMS:-step}; do
      name=$(echo "$cell${REPLACE:+_$REPLACE}" | tr ':=,' '___')_gluon${gluon}_$arm
      # launches alternate step, main loop with --mainloop: -s 2 / -s 5 profile a third weight set's
      case $arm in mainloop) skip=5; flag=--mainloop ;; nan) skip=2; flag=--nan-grad ;; *) skip=2; flag= ;; esac
      FORGE_GLUON=$gluon timeout "${NCU_TIMEOUT:-100}" ncu --clock-control none -k regex:fused_step -s $skip -c 1 \
        ${SECTIONS:---section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
        --section SchedulerStats --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy} \
        ${SOURCE:+--section SourceCounters} ${SAMPLING:+--warp-sampling-interval $SAMPLING} -f -o "$OUT/ncu/$name" \
        python3 scripts/device/ncu_kernel.py --cell "$cell" $flag ${REPLACE:+--replace "$REPLACE"} > "$OUT/ncu/$name.log" 2>&1
      echo "[ncu_kernel.sh] $name exit $?"
      ncu -i "$OUT/ncu/$name.ncu-rep" --page details > "$OUT/ncu/$name.txt" 2>&1
      grep -E "ncu_kernel\]|Duration|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|SM Frequency|Memory Throughput|Compute \(SM\)|Issue Slots Busy|No Eligible|Registers Per|ERR" "$OUT/ncu/$name.txt" | head -20
      if [ -n "${SOURCE:-}" ]; then
        ncu -i "$OUT/ncu/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/${name}_sass.csv" 2>&1
        gzip -f "$OUT/ncu/${name}_sass.csv"
        python3 scripts/sass_stalls.py "$OUT/ncu/${name}_sass.csv.gz" --waits 2>&1 | head -40
      fi
    done
  done
done
tar -C "$OUT" -czf "$OUT/ncu.tgz" ncu && rm -rf "$OUT/ncu"
