#!/usr/bin/env bash
# Session 19, call 1 (cold): session 18's next/call1.sh as written (clock probe with main-loop windows,
# BT >= 4096 re-sweep on the wide kernel with --winners, AdamW bf16 timeline at BT 512/1024).
# Run as: mkdir -p $OUT && OUT=$OUT timeout 560 bash results/2026-12-02/session18/next/call1.sh
exec bash "$(dirname "$0")/../session18/next/call1.sh"
