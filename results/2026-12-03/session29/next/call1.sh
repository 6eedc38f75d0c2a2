#!/usr/bin/env bash
# Prepared in session 29, not run (device time spent): the int8 rule's halves with the accumulator carried
# through the loop (next/int8_loop_carried_half.patch; offline: int8 tall stack 96-104 -> 16-24 B, the ping-pong
# loop -0 to -16 static instructions: scripts/compile_check.py --gluon --quick --sass). Same values into the same rule, so the same bits: checked first (step_bits
# against the package before, the int8 GPU tests), then the int8 cells that miss int8 <= bf16, each with its bf16
# twin, against the package before (code_ab.sh new/base/new2; RATIO needs both arms in a run: the twin is in
# kernel.csv's bf16_ms).
#   local, before the call:
#     git apply results/2026-12-03/session29/next/int8_loop_carried_half.patch && git commit -qam "..."
#     rm -rf ab_base && mkdir ab_base && git archive HEAD~1 forge_mcore | tar -x -C ab_base
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
# the int8 GPU tests, then the bits of two AdamW steps against ab_base (scripts/device/check_tree.sh)
TREE=. BASE=ab_base SELECT="int8 and (at_parity or poisoned or every_codec or every_tile or accumulated)" WORKERS=12 \
  TEST_TIMEOUT=150 OUT=$OUT bash scripts/device/check_tree.sh
mkdir -p "$OUT/ab"
ARGS="--shapes 4096x4096,4096x12288,1024x4096 --bts 1024,4096 --arms adamw-int8 --reps 20" RUN_TIMEOUT=90 \
  OUT=$OUT/ab bash scripts/device/code_ab.sh
python3 - <<'PY'
import csv, os
out = os.environ.get("OUT", "/tmp/out") + "/ab"
for run in ("new", "base", "new2"):
    path = f"{out}/{run}/kernel.csv"
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            print(run, r["shape"], r["bt"], f"int8 {float(r['forge_ms']):.4f} ms, bf16 twin / int8 "
                  f"{float(r['bf16_ms']) / float(r['forge_ms']):.3f}")
PY
cd "$OUT" && tar czf /tmp/call1.tgz . && rm -rf "$OUT"/* && mv /tmp/call1.tgz "$OUT/"
