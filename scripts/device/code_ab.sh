#!/usr/bin/env bash
# Two versions of the package on the same kernel-bench cells, in alternating runs on one device:
# this tree, a base tree, this tree again (this host drifts; compare within one call only).
#   local, before the call:  rm -rf ab_base && mkdir ab_base && git archive <ref> forge_mcore | tar -x -C ab_base
#   device call:             ARGS="--shapes 4096x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16" bash scripts/device/code_ab.sh
# Writes $OUT/{new,base,new2}/kernel.csv (+ logs) and prints FORGE ms per cell and run, and the
# ratio of the arms named in RATIO (default adamw-int8/adamw-bf16) within each run.
set -uo pipefail
OUT=${OUT:-/tmp/out}
ARGS=${ARGS:-"--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16 --reps 30"}
for run in new base new2; do
  tree=$PWD
  [ "$run" = base ] && tree=$PWD/ab_base
  FORGE_AUTOTUNE=0 PYTHONPATH=$tree timeout "${RUN_TIMEOUT:-150}" python3 -m forge_mcore.bench.kernel --out "$OUT/$run" $ARGS \
    > "$OUT/$run.log" 2>&1
  echo "[code_ab] $run exit $?"
  rm -f "$OUT/$run/kernel_bench.png" "$OUT/$run/kernel_table.md"  # (the tool returns only a few files)
done
RATIO=${RATIO:-adamw-int8/adamw-bf16} python3 - <<'PY'
import csv, os
out, (num, den) = os.environ.get("OUT", "/tmp/out"), os.environ["RATIO"].split("/")
runs = {r: {(x["shape"], x["bt"], x["arm"]): float(x["forge_ms"]) for x in csv.DictReader(open(f"{out}/{r}/kernel.csv"))}
        for r in ("new", "base", "new2") if os.path.exists(f"{out}/{r}/kernel.csv")}
for cell in sorted(next(iter(runs.values()))):
    times = " ".join(f"{r} {t[cell]:.4f}" for r, t in runs.items() if cell in t)
    print(*cell, times)
for shape, bt in sorted({c[:2] for c in next(iter(runs.values()))}):
    ratios = [f"{r} {t[(shape, bt, num)] / t[(shape, bt, den)]:.3f}" for r, t in runs.items()
              if (shape, bt, num) in t and (shape, bt, den) in t]
    if ratios:
        print(shape, bt, f"{num}/{den}:", *ratios)
PY
