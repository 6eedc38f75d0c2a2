#!/usr/bin/env bash
# Session 45, device call 7: call 5 (the 1024 x 4096 BT 512 A/B and the acceptance grid) on an H200 only; on
# any other card it stops at once (the H100 ran both in call 5).
#   bash results/2026-12-06/session45/call7.sh     (device, repository root; writes $OUT)
# Ran on 76a0a5f, whose H200 rows held the first_fill_after twins; since eb81817 they hold the old configs, so on
# today's tree this A/B compares a config with itself: use call11.sh instead.
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
if grep -q H200 "$OUT/card.txt"; then OUT=$OUT bash results/2026-12-06/session45/call5.sh; fi
