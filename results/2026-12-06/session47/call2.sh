#!/usr/bin/env bash
# Session 47, device call 2: on an H200 h200_call1.sh; on anything else the decay probe (Lion's decay value against
# its buffers' placement, tall and three-buffer ring, 4096^2 BT 1024) with the SM clock and power sampled beside it.
#   bash results/2026-12-06/session47/call2.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 100 > "$OUT/smi.csv" &
SMI=$!
timeout 300 python3 results/2026-12-06/session47/decay_probe.py 2>&1 | tee "$OUT/decay_probe.log"
kill $SMI
