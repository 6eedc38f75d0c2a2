#!/usr/bin/env bash
# Session 50, device call 4: per-SASS stall samples (Nsight SourceCounters) of the LM head's AdamW step at BT 16384,
# int8 and bf16 moments, each on its committed cooperative-tall row: where int8's rule spends the ~8k cycles per tile
# it takes beyond bf16's (session 48: 2.9 against 1.7 Mcycles of step beyond the main loop). The kernel runs ~30 ms,
# so ncu's automatic sampling interval is kept (SAMPLING unset). First rule_cost.py on both arms: the step, the same step
# with a NaN gradient (every tile's rule skipped, its bytes still moved) and its main loop alone, interleaved.
# On an H200 session 47's h200_call1.sh runs whole instead.
#   bash results/2026-12-06/session50/call4.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
CELLS=151936x4096:16384 ARMS=adamw-int8,adamw-bf16 REPS=10 timeout 150 python3 scripts/device/rule_cost.py
echo "== rule_cost rc $?"
CELLS="151936x4096:16384:adamw-int8 151936x4096:16384:adamw-bf16" GLUON_FLAGS=1 SOURCE=1 NCU_TIMEOUT=200 \
  bash scripts/device/ncu_kernel.sh
