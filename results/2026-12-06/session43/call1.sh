#!/usr/bin/env bash
# Session 43, device call 1: the tile_l2_ahead candidates and tile_stream.py in one call of < 600 s, for
# machines are scarce (session 42: one call in thirteen tries). With tile_l2_ahead.patch applied:
#   git apply results/2026-12-05/session42/tile_l2_ahead.patch
#   bash results/2026-12-06/session43/call1.sh     (device, repository root; writes $OUT; env AB_ARMS, CELLS)
# (a) the 48 GPU tests of the eight tile_l2_ahead candidates, compiled and run while config_ab.py compiles its
# arms (nothing is timed until both are done); (b) each 1024 x 4096 ring winner at BT 512/1024 against itself
# with 2 and 4 halves ahead (bits checked against the winner first); (c) tile_stream.py on 1024 x 4096.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
export REFERENCE=winner ROUNDS=5 VARY="tile_l2_ahead=2;tile_l2_ahead=4"
AB_ARMS=${AB_ARMS:-"sgdm-bf16 adamw-bf16"}
CELLS=${CELLS:-1024x4096:512,1024x4096:1024}
SELECT="l2ahead and (parity or poisoned or traced or every_codec)" TIMEOUT=170 WORKERS=6 \
  bash scripts/device/gluon_tests.sh > "$OUT/tests_summary.txt" 2>&1 &
for arm in $AB_ARMS; do
  WARM_ONLY=1 CELLS=$CELLS ARMS=$arm timeout 170 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait; cat "$OUT/tests_summary.txt"; grep -h warmed "$OUT"/warm_*.log
CELLS=$CELLS ARMS=${AB_ARMS// /,} timeout 170 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"
python3 - <<'PY'
import ast, json, os
for line in open(os.path.join(os.environ.get("OUT", "/tmp/out"), "ab.log")):
    if line.startswith("{") and '"ms"' in line:
        r = json.loads(line)
        cfg = ast.literal_eval(r["config"])
        print(r["cell"], r["arm"], f"stages {cfg['num_stages']} ring {cfg['tile_ring']} ahead {cfg['tile_l2_ahead']}",
              f"{r['ms'] * 1000:.2f} us x{r['speedup']:.3f} bits {r['bits_equal_reference']}", flush=True)
PY
SHAPE=1024x4096 OUT=$OUT timeout 120 python3 scripts/device/tile_stream.py > "$OUT/stream.log" 2>&1
echo "== tile_stream rc $?"; grep -v Warning "$OUT/stream.log"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
