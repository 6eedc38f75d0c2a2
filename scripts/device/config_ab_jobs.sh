#!/usr/bin/env bash
# scripts/device/config_ab.py over several jobs in one device call: every (cell, arm) compiled first in
# parallel processes (WARM_ONLY, eight at a time, so the timed runs find Triton's cache warm), then each
# job timed in one process, then one line per cell, arm and config.
#   device call, from the repository root, PYTHONPATH=$PWD FORGE_AUTOTUNE=0 exported, config_ab.py's
#   env (REFERENCE, VARY, ROUNDS) exported:
#   JOBS=$'4096x4096:512,1024x4096:1024:adamw-bf16,sgdm-bf16\n12288x4096:1024:adamw-bf16' OUT=$OUT \
#     bash scripts/device/config_ab_jobs.sh        (a job: cells, then ":" and its arms)
# Writes $OUT/warm.log, $OUT/ab.log and $OUT/config_ab_<job>.csv.
set -u
OUT=${OUT:-/tmp/out}
start=$(date +%s)
n=0
while IFS= read -r job; do
  arms=${job##*:}; cells=${job%:*}
  for cell in ${cells//,/ }; do for arm in ${arms//,/ }; do
    WARM_ONLY=1 CELLS=$cell ARMS=$arm timeout "${WARM_TIMEOUT:-400}" python3 scripts/device/config_ab.py \
      >> "$OUT/warm.log" 2>&1 &
    n=$((n + 1)); [ $((n % 8)) -eq 0 ] && wait
  done; done
done <<< "$JOBS"
wait
echo "warm $(( $(date +%s) - start )) s, $(grep -c warmed "$OUT/warm.log") of $n"
grep -v warmed "$OUT/warm.log" | grep -i "error\|false" | head -5
job_n=0
while IFS= read -r job; do
  arms=${job##*:}; cells=${job%:*}
  job_n=$((job_n + 1))
  rm -f "$OUT/config_ab.csv"
  CELLS=$cells ARMS=$arms timeout "${JOB_TIMEOUT:-300}" python3 scripts/device/config_ab.py >> "$OUT/ab.log" 2>&1
  mv "$OUT/config_ab.csv" "$OUT/config_ab_$job_n.csv" 2>/dev/null
done <<< "$JOBS"
echo "timed $(( $(date +%s) - start )) s"
python3 - "$OUT" <<'PY'
import ast, csv, glob, sys
for path in sorted(glob.glob(sys.argv[1] + "/config_ab_*.csv")):
    for r in csv.DictReader(open(path)):
        c = ast.literal_eval(r["config"])
        print(f"{r['cell']:>18} {r['arm']:<10} {c['kernel']:<10} s{c['num_stages']} e{c['epilogue_stages']} "
              f"g{c['group_m']:<5} {float(r['ms']):.4f} ms x{float(r['speedup']):.3f} bits={r['bits_equal_reference']}")
PY
