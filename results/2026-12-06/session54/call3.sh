#!/usr/bin/env bash
# Session 54, call 3. First, on one card: the grid's LM head cell at BT 16384 (AdamW bf16 and int8, int8 timed beside
# bf16 rep by rep, each replay behind a GPU spin: the acceptance method) and clock_probe.py on the same rows (each arm
# replayed back to back for 2 s at the 700 W cap): does the grid's replay pattern make int8's miss (call 2, another
# card: back to back int8 0.990-0.995 of bf16)? Then the pass buffers (TileConfig.epilogue_stages 4) where session 14
# found the second pass's wait largest, tall tiles at BT <= 1024: config_ab.py (REFERENCE=winner, five rounds, bits
# compared first) of SGD-m and Lion's tall rows against BK 32 six-stage and BK 64 three-stage twins with a buffer per
# pass. On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session54/call3.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
start=$(date +%s)
timeout 100 python3 -m forge_mcore.bench.kernel --out "$OUT/grid" --shapes 151936x4096 --bts 16384 \
  --arms adamw-bf16,adamw-int8 --reps 30 > "$OUT/grid.log" 2>&1
echo "grid rc $? ($(( $(date +%s) - start )) s)"; tail -n 4 "$OUT/grid.log"; rm -f "$OUT"/grid/*.png
CELLS="151936x4096:16384:adamw-bf16+adamw-int8" OUT=$OUT timeout 60 python3 scripts/device/clock_probe.py \
  > "$OUT/clock_probe.log" 2>&1
echo "probe rc $? ($(( $(date +%s) - start )) s)"; tail -n 4 "$OUT/clock_probe.log"
abx() {  # NAME CELLS ARMS VARY TIMEOUT: the prologue's ab with its own time limit
  mkdir -p "$OUT/$1"
  OUT=$OUT/$1 REFERENCE=winner ROUNDS=5 CELLS=$2 ARMS=$3 VARY=$4 timeout "$5" python3 \
    scripts/device/config_ab.py > "$OUT/$1/ab.log" 2>&1
  echo "== $1 rc $? ($(( $(date +%s) - start )) s)"; sed -n '/^summary:/,$p' "$OUT/$1/ab.log"
}
PASS="epilogue_stages=4,block_k=32,num_stages=6;epilogue_stages=4,num_stages=3"
abx tall1k 4096x4096:1024,12288x4096:1024,4096x12288:1024,151936x4096:1024 sgdm-bf16,lion-bf16 "$PASS" 220
abx tall512 12288x4096:512,4096x12288:512,151936x4096:512 sgdm-bf16 "$PASS" 120
cd "$OUT" && tar czf call3.tgz --exclude=call3.tgz . && find . -mindepth 1 ! -name call3.tgz -delete
