#!/usr/bin/env bash
# Session 14, device call 4: where call 3's int8 bits DIFF (1000x4096 BT 512) comes from (base twice,
# base + the release patch, this tree), then the tall candidates swept beside the tuned configs.
set -u
OUT=${OUT:-/tmp/out}
export FORGE_AUTOTUNE=0
python3 scripts/device/step_bits.py save ab_base /tmp/b1.pt
python3 scripts/device/step_bits.py save ab_base /tmp/b2.pt
python3 scripts/device/step_bits.py save ab_rel /tmp/rel.pt
python3 scripts/device/step_bits.py save . /tmp/new.pt
python3 scripts/device/step_bits.py save . /tmp/new2.pt
python3 scripts/device/step_bits.py compare /tmp/b1.pt /tmp/b2.pt /tmp/rel.pt /tmp/new.pt /tmp/new2.pt | tee $OUT/bits.txt
timeout 300 python3 -m forge_mcore.bench.kernel --out $OUT/sweep --shapes 4096x4096,12288x4096,4096x12288,1024x4096 \
  --bts 512,1024,4096 --arms adamw-bf16,sgdm-bf16,adamw-int8 --sweep --sweep-configs candidates --reps 30 > $OUT/sweep.log 2>&1
echo "sweep rc $?"
python3 - <<'PY'
import csv, ast
rows = list(csv.DictReader(open("/tmp/out/sweep/sweep.csv")))
tuned = {(r["shape"], r["bt"], r["arm"]): float(r["forge_ms"]) for r in csv.DictReader(open("/tmp/out/sweep/kernel.csv"))}
for r in rows:
    c = ast.literal_eval(r["config"]); key = (r["shape"], r["bt"], r["arm"])
    print(*key, f"{c['kernel']} s{c['num_stages']}", f"{float(r['forge_ms']):.4f}", f"tuned {tuned[key]:.4f}", f"{tuned[key] / float(r['forge_ms']):.3f}x")
PY
rm -f $OUT/sweep/*.png
