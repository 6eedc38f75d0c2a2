#!/usr/bin/env bash
# Session 14, device call 5: Gluon GPU tests on the committed tall configs (f7f7dc8 + timeline --kernels),
# then phase timelines of the ping-pong and tall schedules side by side.
set -u
OUT=${OUT:-/tmp/out}
export FORGE_AUTOTUNE=0
TIMEOUT=300 bash scripts/device/gluon_tests.sh  # (the same command, factored out after the call)
timeout 200 python3 -m forge_mcore.bench.timeline --out $OUT/tl --shapes 4096x4096,12288x4096 --bts 512,1024 \
   --arms adamw-bf16,sgdm-bf16 --kernels gluon_ws,gluon_tall --plots 8 > $OUT/tl.log 2>&1; echo "timeline rc $?"
rm -f $OUT/tl/traces.pt
python3 - <<'PY'
import json
for r in json.load(open("/tmp/out/tl/timeline.json")):
    if "skipped" in r: continue
    k = {x: r.get(x) for x in ("shape", "bt", "arm", "kernel", "step_ms", "span cycles", "overlap / span")}
    print(k, {n: (r.get(f"{n} cycles c0"), r.get(f"{n} cycles c1")) for n in ("turn wait", "main loop", "tile wait", "rule + stores issued", "stores drained")})
PY
