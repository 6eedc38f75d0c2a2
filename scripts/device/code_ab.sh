#!/usr/bin/env bash
# Versions of the package on the same kernel-bench cells, in alternating runs on one device:
# this tree, each other tree, this tree again (this host drifts; compare within one call only).
#   local, before the call:  rm -rf ab_base && mkdir ab_base && git archive <ref> forge_mcore | tar -x -C ab_base
# (before session 12 each run imported this tree's package whatever PYTHONPATH said: ``python -m``
# puts the working directory first; results of earlier calls of this script compared a tree to itself)
#   device call:             ARGS="--shapes 4096x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16" bash scripts/device/code_ab.sh
#   more trees:              TREES="base:ab_base ftz:ab_ftz" (name:folder; default base:ab_base)
#   another Triton:          TREES="t39:.:.triton_parts/3.9.0/site" (name:folder:site, the site folder put ahead on PYTHONPATH)
# Writes $OUT/<run>/kernel.csv (+ logs) for the runs new, each tree, new2, and prints FORGE ms per cell
# and run, and the ratio of the arms named in RATIO (default adamw-int8/adamw-bf16) within each run.
set -uo pipefail
OUT=${OUT:-/tmp/out}
ARGS=${ARGS:-"--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-int8,adamw-bf16 --reps 30"}
TREES=${TREES:-base:ab_base}
RUNS="new:."
for t in $TREES; do RUNS="$RUNS $t"; done
RUNS="$RUNS new2:."
for run in $RUNS; do
  IFS=: read -r name folder site <<< "$run"
  tree=$PWD/$folder
  pypath=${PYTHONPATH:-}
  [ -n "$site" ] && pypath=$PWD/$site:${PYTHONPATH:-}
  # run from inside the tree: ``python -m`` puts the working directory ahead of PYTHONPATH
  (cd "$tree" && PYTHONPATH=$pypath FORGE_AUTOTUNE=0 timeout "${RUN_TIMEOUT:-150}" python3 -m forge_mcore.bench.kernel \
    --out "$OUT/$name" $ARGS > "$OUT/$name.log" 2>&1)
  echo "[code_ab] $name exit $?"
  rm -f "$OUT/$name/kernel_bench.png" "$OUT/$name/kernel_table.md"  # (the tool returns only a few files)
done
RUN_NAMES=$(for r in $RUNS; do printf '%s ' "${r%%:*}"; done) RATIO=${RATIO:-adamw-int8/adamw-bf16} python3 - <<'PY'
import csv, os
out, (num, den) = os.environ.get("OUT", "/tmp/out"), os.environ["RATIO"].split("/")
runs = {r: {(x["shape"], x["bt"], x["arm"]): float(x["forge_ms"]) for x in csv.DictReader(open(f"{out}/{r}/kernel.csv"))}
        for r in os.environ["RUN_NAMES"].split() if os.path.exists(f"{out}/{r}/kernel.csv")}
for cell in sorted(next(iter(runs.values()))):
    times = " ".join(f"{r} {t[cell]:.4f}" for r, t in runs.items() if cell in t)
    print(*cell, times)
for shape, bt in sorted({c[:2] for c in next(iter(runs.values()))}):
    ratios = [f"{r} {t[(shape, bt, num)] / t[(shape, bt, den)]:.3f}" for r, t in runs.items()
              if (shape, bt, num) in t and (shape, bt, den) in t]
    if ratios:
        print(shape, bt, f"{num}/{den}:", *ratios)
PY
