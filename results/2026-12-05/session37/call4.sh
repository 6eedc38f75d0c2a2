#!/usr/bin/env bash
# Session 37's plan for a later session, device call 4 (an H100, after call3.sh's winners are committed):
# 1. the acceptance grid on the committed winners (session 15's call4.sh), then the card's temperature, clocks and
#    throttle reasons as the grid leaves it;
# 2. why the LM head at BT 16384 ran 0.70-0.77x its baseline in call 2's H100 grid (SGD-m and Lion on the
#    cooperative-tall winner, 15 ms above their own main loop alone; AdamW int8's tall main loop 38.6 ms where
#    AdamW bf16's cooperative-tall one took 27.7), on the card as hot as the grid left it (those cells ran last):
#    the SM clock and power per arm (scripts/device/clock_probe.py, 2 s windows, arms in turn), then where the
#    step's time goes (forge_mcore.bench.timeline).
#   bash results/2026-12-05/session37/call4.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
start=$(date +%s)
mkdir -p "$OUT/g" && GRID_TIMEOUT=300 OUT=$OUT/g bash results/2026-12-01/session15/call4.sh
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv \
  > "$OUT/after_grid.txt"; cat "$OUT/after_grid.txt"
CELLS="151936x4096:16384:sgdm-bf16+adamw-bf16+mainloop:sgdm-bf16+cublas+sgdm-bf16@num_stages=5;151936x4096:16384:adamw-int8+mainloop:adamw-int8+adamw-bf16" \
  OUT=$OUT/probe timeout 150 python3 scripts/device/clock_probe.py > "$OUT/probe.log" 2>&1
echo "probe rc $? ($(( $(date +%s) - start )) s)"; tail -n 16 "$OUT/probe.log"
timeout 100 python3 -m forge_mcore.bench.timeline --out "$OUT/timeline" --shapes 151936x4096 --bts 16384 \
  --arms sgdm-bf16,adamw-bf16 --reps 5 > "$OUT/timeline.log" 2>&1
echo "timeline rc $? ($(( $(date +%s) - start )) s)"; tail -n 6 "$OUT/timeline.log"; rm -f "$OUT"/timeline/traces.pt
(cd "$OUT" && tar czf /tmp/call4.tgz probe probe.log timeline timeline.log after_grid.txt && rm -rf probe timeline \
  && mv /tmp/call4.tgz .)
