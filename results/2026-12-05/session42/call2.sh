#!/usr/bin/env bash
# Session 42, device call 2: how fast the tile traffic streams. Call 1 timed the 1024 x 4096 SGD-m step at
# BT 64 (a main loop a quarter of it) at 77% of the copy ceiling (H100). (a) scripts/device/tile_stream.py:
# the same bytes by torch's copy, an elementwise kernel, plain Triton tile read-modify-writes of several tile
# shapes and orders, and the fused step at BT 16/64 (SHAPES, default 1024x4096). (b) config_ab.py on the
# step's committed winner at BT 64 and 512 against VARY (default: the tile order group_m 1; no tile ring,
# each consumer its own buffer, five slabs).
#   bash results/2026-12-05/session42/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
export REFERENCE=winner ROUNDS=5 VARY=${VARY:-"group_m=1;tile_ring=0,num_stages=5"}
for shape in ${SHAPES:-1024x4096}; do
  SHAPE=$shape OUT=$OUT timeout 120 python3 scripts/device/tile_stream.py > "$OUT/stream_$shape.log" 2>&1
  echo "== tile_stream $shape rc $?"; grep -v Warning "$OUT/stream_$shape.log"
  [ -f "$OUT/tile_stream.csv" ] && mv "$OUT/tile_stream.csv" "$OUT/tile_stream_$shape.csv"
done
JOBS='1024x4096:64,1024x4096:512:sgdm-bf16' OUT=$OUT WARM_TIMEOUT=240 bash scripts/device/config_ab_jobs.sh \
  > "$OUT/ab_jobs.log" 2>&1
echo "== config_ab"; cat "$OUT/ab_jobs.log"
python3 - <<'PY'
import json, os
out = os.environ.get("OUT", "/tmp/out")
for line in open(f"{out}/ab.log"):
    if line.startswith("{"):
        r = json.loads(line)
        if "ms" in r:
            cfg = json.loads(r["config"].replace("'", '"').replace("True", "true").replace("False", "false").replace("None", "null"))
            print(r["cell"], r["arm"], f"group_m {cfg['group_m']} ring {cfg['tile_ring']} stages {cfg['num_stages']}",
                  f"{r['ms'] * 1000:.2f} us x{r['speedup']:.3f} bits {r['bits_equal_reference']}")
PY
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
