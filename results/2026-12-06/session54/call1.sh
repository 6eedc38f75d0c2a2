#!/usr/bin/env bash
# Session 54, call 1: a buffer per pass of a tall unit (TileConfig.epilogue_stages 4): the second pass's weight and
# int8 states arrive during the main loop, not after the first pass's stores. First the GPU tests of the three
# candidates (bits at parity, poisoned tiles, main loop only, traced, every rule); then config_ab.py (REFERENCE=winner,
# five rounds, bits compared first) of the int8 rows they could replace: the cooperative-tall LM head rows at BT 16384
# and 4096 against their four-stage twins with and without the pass buffers, and the tall rows (LM head BT 1024,
# 12288 x 4096 BT 16384) against BK 32 six-stage twins with and without. On an H200 session 47's h200_call1.sh
# runs instead (the prologue).
#   bash results/2026-12-06/session54/call1.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
start=$(date +%s)
workers=$(python3 -c "import xdist" 2>/dev/null && echo "-n 6" || echo "")
timeout 230 python3 -m pytest -q -m gpu -p no:cacheprovider $workers tests/functional/test_kernel_gpu.py \
  -k "Nonee4" > "$OUT/tests.log" 2>&1
echo "tests rc $? ($(( $(date +%s) - start )) s)"; tail -n 4 "$OUT/tests.log"
abx() {  # NAME CELLS VARY TIMEOUT: AdamW int8, as the prologue's ab with its own time limit
  mkdir -p "$OUT/$1"
  OUT=$OUT/$1 REFERENCE=winner ROUNDS=5 CELLS=$2 ARMS=adamw-int8 VARY=$3 timeout "$4" python3 \
    scripts/device/config_ab.py > "$OUT/$1/ab.log" 2>&1
  echo "== $1 rc $? ($(( $(date +%s) - start )) s)"; sed -n '/^summary:/,$p' "$OUT/$1/ab.log"
}
abx coop 151936x4096:16384,151936x4096:4096 "epilogue_stages=4,num_stages=4;num_stages=4" 200
abx tall 151936x4096:1024,12288x4096:16384 "epilogue_stages=4,block_k=32,num_stages=6;block_k=32,num_stages=6" 130
cd "$OUT" && tar czf call1.tgz --exclude=call1.tgz . && find . -mindepth 1 ! -name call1.tgz -delete
