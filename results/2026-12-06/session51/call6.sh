#!/usr/bin/env bash
# Session 51, device call 6: wave_sync as committed (a program whose wait timed out waits no more in that launch)
# against the committed rows where call 4-5's waits won (the LM head at BT 16384 and 4096, 12288 x 4096 at 16384)
# and 12288 x 4096 at BT 4096, every arm: which rows take a wait, and how long. First its GPU test (waits that all
# time out, and waits that none do). On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session51/call6.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider \
  "tests/functional/test_kernel_gpu.py::test_wave_sync_changes_no_bit_and_zeroes_its_counters_after_each_launch" 2>&1 | tail -3
ab wave_lm16k 151936x4096:16384 adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 "wave_sync=150000;wave_sync=600000"
ab wave_rest 12288x4096:16384,151936x4096:4096,12288x4096:4096 adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 \
  "wave_sync=150000;wave_sync=600000"
