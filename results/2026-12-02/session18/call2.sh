#!/usr/bin/env bash
# Session 18 call 2: session 17's next/call2.sh, run as written (the record is that file, not a copy).
exec bash results/2026-12-02/session17/next/call2.sh "$@"
