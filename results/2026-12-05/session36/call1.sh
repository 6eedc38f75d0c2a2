#!/usr/bin/env bash
# Session 36, device call 1: the dY-resident ping-pong schedule (TileConfig.dy_resident, configs.CANDIDATES).
# 1. its GPU tests (bits against the streaming kernel, parity, poisoned tile, main loop only, traced);
# 2. each BT <= 1024 miss's committed winner against itself with dy_resident (config_ab.py, REFERENCE=winner,
#    bits first, arms interleaved): BT 512 with the rings that fit a 64 KB dY block, BT 1024 with those
#    that fit 128 KB (and the LM head's int8 cell, whose 64-row tiles read 1.5x a tall tile's slab bytes).
#    Every (cell, arm) compiled first in parallel (WARM_ONLY).
#   git apply results/2026-12-05/session36/dy_resident.patch   (the lever, not kept; on ef9f58d)
#   bash results/2026-12-05/session36/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 REFERENCE=winner OUT
V512="dy_resident=True,num_stages=7,tile_ring=3;dy_resident=True,num_stages=5,tile_ring=3;dy_resident=True,num_stages=8,tile_ring=2;dy_resident=True,num_stages=7,tile_ring=2"
V1024="dy_resident=True,num_stages=4,tile_ring=2;dy_resident=True,num_stages=3,tile_ring=2;dy_resident=True,block_k=32,num_stages=6,tile_ring=2"
JOBS512="1024x4096:512 sgdm-bf16 lion-bf16 adamw-bf16"
JOBS1024=$'1024x4096:1024 sgdm-bf16 lion-bf16 adamw-bf16\n4096x4096:1024 adamw-bf16 lion-bf16\n4096x12288:1024 adamw-bf16\n151936x4096:1024 adamw-int8'
start=$(date +%s)
warm() {  # cell arm vary
  VARY=$3 WARM_ONLY=1 CELLS=$1 ARMS=$2 timeout 300 python3 scripts/device/config_ab.py >> "$OUT/warm.log" 2>&1
}
while read -r cell arms; do for a in $arms; do warm "$cell" "$a" "$V512" & done; done <<< "$JOBS512"
while read -r cell arms; do for a in $arms; do warm "$cell" "$a" "$V1024" & done; done <<< "$JOBS1024"
timeout 200 python3 -m pytest -q -m "gpu and not multigpu" tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "resident and not every_rule and not every_tile_config" -n 6 -rf --tb=short -W ignore > "$OUT/tests.log" 2>&1
echo "tests rc $? ($(( $(date +%s) - start )) s)"; tail -n 1 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -8
wait
echo "warm $(( $(date +%s) - start )) s"; grep -c warmed "$OUT/warm.log"; grep -v warmed "$OUT/warm.log" | tail -5
grep warmed "$OUT/warm.log"
n=0
timed() {  # vary jobs
  while read -r cell arms; do
    n=$((n + 1))
    VARY=$1 CELLS=$cell ARMS=${arms// /,} timeout 150 python3 scripts/device/config_ab.py >> "$OUT/ab.log" 2>&1
    mv "$OUT/config_ab.csv" "$OUT/config_ab_$n.csv" 2>/dev/null
  done <<< "$2"
}
timed "$V512" "$JOBS512"
timed "$V1024" "$JOBS1024"
echo "timed $(( $(date +%s) - start )) s"
python3 - "$OUT" <<'PY'
import ast, csv, glob, sys
for path in sorted(glob.glob(sys.argv[1] + "/config_ab_*.csv")):
    for r in csv.DictReader(open(path)):
        c = ast.literal_eval(r["config"])
        print(f"{r['cell']:>16} {r['arm']:<10} {c['kernel']} k{c['block_k']} s{c['num_stages']} r{c['tile_ring']} "
              f"res={c.get('dy_resident')} {float(r['ms'])*1000:.2f} us x{float(r['speedup']):.3f} "
              f"bits={r['bits_equal_reference']}")
PY
