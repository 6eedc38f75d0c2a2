#!/usr/bin/env bash
# Session 41, device call 1: the ping-pong tile ring with cp.async fills (TileConfig tile_ring + tile_fill "lsu"),
# and with the tile producer's own st.global stores as well (tile_store "lsu"; configs.CANDIDATES), against the
# committed winners.
# 1. GPU tests: each lsu-ring candidate at parity (every codec), every rule, a poisoned tile, traced, main-loop-only;
# 2. each BT <= 1024 ring winner against itself with lsu fills, and lsu fills and stores (config_ab.py
#    REFERENCE=winner, bits first), and on 1024 x 4096 the other ring/depth with both;
# 3. the phase timeline of 1024 x 4096 BT 512 SGD-m, winner and candidates (does the main loop stretch less?).
# Ran at afd17fa; on main apply the change first (`git apply results/2026-12-05/session41/lsu_tiles.patch`: the
# tile_store field and the candidates it names are not on main).
#   bash results/2026-12-05/session41/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
# (as run, this was the same pytest selection inline, with --tb=short; scripts/device/gluon_tests.sh is the shared form)
SELECT="lsu and ring" TIMEOUT=240 OUT=$OUT bash scripts/device/gluon_tests.sh
echo "($(( $(date +%s) - start )) s)"
mkdir -p "$OUT/lsu" "$OUT/depth"
JOBS=$'1024x4096:512,1024x4096:1024:sgdm-bf16,lion-bf16,adamw-bf16,adamw-int8\n4096x4096:512,4096x4096:1024:adamw-bf16,lion-bf16' \
  REFERENCE=winner VARY="tile_fill=lsu;tile_fill=lsu,tile_store=lsu" ROUNDS=5 WARM_TIMEOUT=200 JOB_TIMEOUT=150 OUT=$OUT/lsu \
  bash scripts/device/config_ab_jobs.sh > "$OUT/lsu.log" 2>&1
echo "lsu A/B done ($(( $(date +%s) - start )) s)"; tail -n 38 "$OUT/lsu.log"
JOBS=$'1024x4096:512,1024x4096:1024:sgdm-bf16,lion-bf16' \
  REFERENCE=winner VARY="tile_fill=lsu,tile_ring=2,num_stages=8;tile_fill=lsu,tile_ring=3,num_stages=7;tile_fill=lsu,tile_ring=2,num_stages=8,tile_store=lsu;tile_fill=lsu,tile_ring=3,num_stages=7,tile_store=lsu" ROUNDS=5 \
  WARM_TIMEOUT=200 JOB_TIMEOUT=150 OUT=$OUT/depth bash scripts/device/config_ab_jobs.sh > "$OUT/depth.log" 2>&1
echo "depth A/B done ($(( $(date +%s) - start )) s)"; tail -n 20 "$OUT/depth.log"
timeout 150 python3 -m forge_mcore.bench.timeline --out "$OUT/timeline" --shapes 1024x4096 --bts 512 \
  --arms sgdm-bf16 --candidates > "$OUT/timeline.log" 2>&1
echo "timeline rc $? ($(( $(date +%s) - start )) s)"
python3 - "$OUT/timeline/timeline.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["config"][-90:], "step", r["step_ms"], "span", r["span cycles"], "ml c0/c1", r["main loop cycles c0"],
          r["main loop cycles c1"], "tile wait", r["tile wait cycles c0"], "rule", r["rule + stores issued cycles c0"])
PY
