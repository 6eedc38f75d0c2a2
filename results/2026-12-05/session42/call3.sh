#!/usr/bin/env bash
# Session 42, device call 3 (prepared, not run: the session's device budget went on refused starts).
# (a) TileConfig.tile_l2_ahead (tile_l2_ahead.patch): as the tile ring fills half q, the tile producer asks L2
# for half q + 2 or q + 4 (TMA prefetches, no shared memory: tile bytes in flight beyond the ring). GPU tests
# on the eight candidates, then each 1024 x 4096 ring winner at BT 512 and 1024 against itself with 2 and 4
# (config_ab.py REFERENCE=winner, bits checked against it first). (b) call2.sh's tile_stream.py.
#   git apply results/2026-12-05/session42/tile_l2_ahead.patch     (before the call; not on main)
#   bash results/2026-12-05/session42/call3.sh     (device, repository root; writes $OUT; env AB_ARMS, CELLS)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
SELECT="l2ahead and (parity or poisoned or traced or every_codec)" TIMEOUT=150 bash scripts/device/gluon_tests.sh
export REFERENCE=winner ROUNDS=5 VARY="tile_l2_ahead=2;tile_l2_ahead=4"
AB_ARMS=${AB_ARMS:-"sgdm-bf16 adamw-bf16"}
CELLS=${CELLS:-1024x4096:512,1024x4096:1024}
for arm in $AB_ARMS; do  # compiled in parallel, then timed one after the other
  WARM_ONLY=1 CELLS=$CELLS ARMS=$arm timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_$arm.log" 2>&1 &
done
wait; grep -h warmed "$OUT"/warm_*.log
CELLS=$CELLS ARMS=${AB_ARMS// /,} timeout 200 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
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
SHAPE=1024x4096 timeout 120 python3 scripts/device/tile_stream.py > "$OUT/stream.log" 2>&1
echo "== tile_stream rc $?"; grep -v Warning "$OUT/stream.log"
