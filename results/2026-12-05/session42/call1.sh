#!/usr/bin/env bash
# Session 42, device call 1: (a) what a call of the committed kernel costs in a stream when it has almost
# nothing to do (session 41's call2.sh, widened), (b) the TMA-descriptor prefetch before the PDL wait
# (gluon_wgrad.DESCRIPTOR_PREFETCH; FORGE_DESCRIPTOR_PREFETCH=0 turns it off), A/B in alternating runs.
#   git apply results/2026-12-05/session42/descriptor_prefetch.patch   (the prefetch is not on main)
#   bash results/2026-12-05/session42/call1.sh     (device, repository root; writes $OUT)
# (a) scripts/device/graph_length.py: graphs of 1-24 calls, fitted as per-graph overhead + per-call steady
# state, beside cuBLAS's wgrad and a one-element torch kernel. 128 x 128 at BT 64 is one 64 x 128 unit on one
# program (launch, PDL wait, prologue and end of the grid); 1024 x 4096 at BT 64 all of its tile traffic
# beside an eight-fold shorter main loop; BT 512 and 1024 the cells that miss. Again with FORGE_PDL=0, and
# the one-unit cell on the Triton kernel (FORGE_GLUON=0).
# (b) the kernel bench (graph-timed, as the grid) on 1024 x 4096 and 4096^2 at BT 512/1024: on, off, on.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"; cat "$OUT/gpu.txt"
SELECT="gluon_kernel_at_parity or back_to_back or poisoned or traced_gluon or replayed" TIMEOUT=150 \
  bash scripts/device/gluon_tests.sh
length() {  # length NAME CELLS [ENV=VALUE...]
  local name=$1 cells=$2; shift 2
  mkdir -p "$OUT/$name"
  env "$@" CELLS="$cells" LENGTHS=1,2,3,6,12,24 REPS=30 OUT="$OUT/$name" timeout 200 \
    python3 scripts/device/graph_length.py > "$OUT/$name.log" 2>&1
  echo "== $name rc $?"; grep -v Warning "$OUT/$name.log"
}
SMALL="128x128:64:sgdm-bf16;1024x4096:512:sgdm-bf16"
length pf "$SMALL;1024x4096:64:sgdm-bf16;1024x4096:1024:sgdm-bf16;1024x4096:512:adamw-bf16"
length nopf "$SMALL" FORGE_DESCRIPTOR_PREFETCH=0
length pf2 "$SMALL"
length nopdl "$SMALL" FORGE_PDL=0
length triton "128x128:64:sgdm-bf16" FORGE_GLUON=0
for run in pf:1 nopf:0 pf2:1; do
  name=${run%%:*}
  FORGE_DESCRIPTOR_PREFETCH=${run##*:} timeout 150 python3 -m forge_mcore.bench.kernel --out "$OUT/bench_$name" \
    --shapes 1024x4096,4096x4096 --bts 512,1024 --arms sgdm-bf16,lion-bf16,adamw-bf16 --reps 30 \
    > "$OUT/bench_$name.log" 2>&1
  echo "== bench $name rc $?"
  rm -f "$OUT/bench_$name/kernel_bench.png" "$OUT/bench_$name/kernel_table.md"
done
python3 - <<'PY'
import csv, os
out = os.environ.get("OUT", "/tmp/out")
runs = {r: {(x["shape"], x["bt"], x["arm"]): x for x in csv.DictReader(open(f"{out}/bench_{r}/kernel.csv"))}
        for r in ("pf", "nopf", "pf2") if os.path.exists(f"{out}/bench_{r}/kernel.csv")}
for cell in sorted(next(iter(runs.values()))):
    print(*cell, " ".join(f"{r} {float(t[cell]['forge_ms']) * 1000:.2f}us" for r, t in runs.items() if cell in t),
          " pct_floor " + " ".join(f"{r} {t[cell].get('pct_floor', '?')}" for r, t in runs.items() if cell in t))
PY
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> "$OUT/gpu.txt"; tail -1 "$OUT/gpu.txt"
