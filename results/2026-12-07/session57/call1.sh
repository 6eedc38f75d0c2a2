#!/usr/bin/env bash
# Session 57, the first call: on an H200 session 56's prepared twins and grid (h200_next.sh); on any other card
# the single-GPU kernel suite outside the LM head (its log comes back for a DONE= resume).
#   bash results/2026-12-07/session57/call1.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-07/session56/h200_next.sh
else
  nvidia-smi --query-gpu=name,uuid --format=csv | tee "$OUT/card_uuid.txt"
  SELECT="not 151936" WORKERS=10 TIMEOUT=540 NAME=rest bash scripts/device/gluon_tests.sh
fi
