#!/usr/bin/env bash
# Session 31, device call 5 (branch wide-exp, two_warpgroup_consumers.patch): ping-pong consumers of two
# warpgroups each (num_warps 16, CANDIDATES), ruling a 64 x 128 unit's two column halves at once as [64, 2, 64]
# (offline: int8 stack 200-264 B at 120 registers, bf16 56 B). Each cell's committed winner against them: bits
# first, then time, interleaved (scripts/device/config_ab.py, REFERENCE=winner).
#   bash results/2026-12-04/session31/call5.sh     (on 9155559, branch wide-exp, or main with
#   two_warpgroup_consumers.patch applied: the experiment was not merged)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
CELLS=4096x4096:1024,4096x4096:512,12288x4096:1024,151936x4096:1024
for cell in ${CELLS//,/ }; do
  REFERENCE=winner ARMS=adamw-int8,adamw-bf16 CELLS=$cell WARM_ONLY=1 OUT=$OUT timeout 200 \
    python3 scripts/device/config_ab.py > "$OUT/bits_${cell//:/_}.log" 2>&1 &
done
wait
grep -h "^{" "$OUT"/bits_*.log; grep -h -v "^{" "$OUT"/bits_*.log | tail -n 5
mkdir -p "$OUT/ab"
ROUNDS=3 REFERENCE=winner ARMS=adamw-int8,adamw-bf16 CELLS=$CELLS OUT=$OUT/ab timeout ${AB_TIMEOUT:-300} \
  python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1; echo "ab rc $?"
python3 - "$OUT/ab.log" <<'PY'
import ast, json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line); c = ast.literal_eval(r["config"])
        print(r["cell"], r["arm"], c["kernel"], "w", c["num_warps"], "s", c["num_stages"], "fd", c["fast_division"],
              "ring", c["tile_ring"], round(r["ms"] * 1e3, 1), "us", round(r["speedup"], 3), r["bits_equal_reference"])
PY
