#!/usr/bin/env bash
# Session 46, device call 3: on an H200, session 45's call11 (the twins, then the grid); on an H100 the sweeps of
# the H100 grid's cells that borrow the H200's rows and miss (session 45, call 5): 4096^2 BT 16384 AdamW bf16 and
# Lion (tall, cooperative, cooperative tall: the H100's own SGD-m and int8 rows there are cooperative tall), and
# 4096^2 BT 1024 Lion (ping-pong and tall). `--winners` on them writes the H100's rows.
#   bash results/2026-12-06/session46/call3.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session46/h200_or_h100.sh
timeout 330 python3 -m forge_mcore.bench.kernel --out "$OUT/sweep16k" --shapes 4096x4096 --bts 16384 \
  --arms adamw-bf16,lion-bf16 --sweep --sweep-kernels gluon_tall,gluon_coop,gluon_coop_tall > "$OUT/sweep16k.log" 2>&1
echo "sweep16k rc $?"
timeout 200 python3 -m forge_mcore.bench.kernel --out "$OUT/sweep1k" --shapes 4096x4096 --bts 1024 \
  --arms lion-bf16 --sweep --sweep-kernels gluon_ws,gluon_tall > "$OUT/sweep1k.log" 2>&1
echo "sweep1k rc $?"
grep -hE "BT=" "$OUT"/sweep*.log | head -20
rm -f "$OUT"/sweep*/*.png
tar czf "$OUT/sweeps.tgz" -C "$OUT" sweep16k sweep1k sweep16k.log sweep1k.log && rm -rf "$OUT"/sweep16k "$OUT"/sweep1k "$OUT"/sweep*.log
