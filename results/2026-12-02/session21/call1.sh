#!/usr/bin/env bash
# Session 21 call 1: the tile order (TileConfig.group_m, 8 in every committed config and never swept)
# on the BT <= 1024 cells. Per cell and arm, the committed winner against itself with group_m 4, 16,
# 32 and 1024 (1024: column-major, every row tile of a column before the next column), bits first
# (scripts/device/config_ab.py, VARY). Compiles in parallel processes first (WARM_ONLY), then one
# timed process. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"
export REFERENCE=winner VARY=group_m=4,16,32,1024 ROUNDS=3
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024:adamw-bf16,lion-bf16,sgdm-bf16
12288x4096:1024,4096x12288:1024,151936x4096:1024:adamw-bf16"
warm() {  # one process per cell and arm, eight at a time
  local pids=() n=0
  while IFS= read -r job; do
    arms=${job##*:}; cells=${job%:*}
    for cell in ${cells//,/ }; do for arm in ${arms//,/ }; do
      WARM_ONLY=1 CELLS=$cell ARMS=$arm timeout 400 python3 scripts/device/config_ab.py >> "$OUT/warm.log" 2>&1 &
      n=$((n + 1)); [ $((n % 8)) -eq 0 ] && wait
    done; done
  done <<< "$JOBS"
  wait
}
start=$(date +%s); warm; echo "warm $(( $(date +%s) - start )) s"; grep -c warmed "$OUT/warm.log"
grep -v warmed "$OUT/warm.log" | grep -i "error\|false" | head -5
while IFS= read -r job; do
  arms=${job##*:}; cells=${job%:*}
  rm -f "$OUT/config_ab.csv"
  CELLS=$cells ARMS=$arms timeout 300 python3 scripts/device/config_ab.py >> "$OUT/ab.log" 2>&1
  job_n=$((${job_n:-0} + 1)); cp "$OUT/config_ab.csv" "$OUT/config_ab_$job_n.csv" 2>/dev/null
done <<< "$JOBS"
echo "timed $(( $(date +%s) - start )) s"
python3 - "$OUT" <<'PY'
import csv, glob, sys, ast
for path in sorted(glob.glob(sys.argv[1] + "/config_ab_*.csv")):
    for r in csv.DictReader(open(path)):
        c = ast.literal_eval(r["config"])
        print(f"{r['cell']:>18} {r['arm']:<10} {c['kernel']:<9} s{c['num_stages']} g{c['group_m']:<5} "
              f"{float(r['ms']):.4f} ms x{float(r['speedup']):.3f} bits={r['bits_equal_reference']}")
PY
