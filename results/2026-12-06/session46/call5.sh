#!/usr/bin/env bash
# Session 46, device call 5: on an H200, session 45's call11 (the twins, then the grid); on an H100 call 4's grid
# misses again, each cell alone by the grid's method (4096 x 12288 AdamW bf16 BT 16384, the int8 cells 4096^2 BT 1024
# and the LM head BT 16384 with their bf16 steps beside them).
#   bash results/2026-12-06/session46/call5.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session46/h200_or_h100.sh
run() {  # name shapes bts arms
  timeout 200 python3 -m forge_mcore.bench.kernel --out "$OUT/$1" --shapes "$2" --bts "$3" --arms "$4" \
    > "$OUT/$1.log" 2>&1
  echo "$1 rc $?"; grep -E "BT=" "$OUT/$1.log"
  rm -f "$OUT/$1"/*.png
}
run wide16k 4096x12288 16384 adamw-bf16
run sq1k 4096x4096 1024 adamw-int8
run lm16k 151936x4096 16384 adamw-int8
tar czf "$OUT/recheck.tgz" -C "$OUT" wide16k sq1k lm16k wide16k.log sq1k.log lm16k.log && \
  rm -rf "$OUT"/wide16k "$OUT"/sq1k "$OUT"/lm16k "$OUT"/*.log
