#!/usr/bin/env bash
# Session 57, the calls after call 1 (which ran the kernel suite outside the LM head to its end on an H100): on an
# H200 session 56's prepared twins and grid (h200_next.sh); on any other card the rest of the single-GPU suite, the
# LM head's kernel tests (one worker) and the nn tests.
#   bash results/2026-12-07/session57/call2.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-07/session56/h200_next.sh; exit
fi
nvidia-smi --query-gpu=name,uuid --format=csv | tee "$OUT/card_uuid.txt"
SELECT="151936" NAME=lm WORKERS=1 TIMEOUT=150 NN=1 bash results/2026-12-04/session31/call3.sh
