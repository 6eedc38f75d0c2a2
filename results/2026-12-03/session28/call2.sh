#!/usr/bin/env bash
# Session 28, call 2: session 27's prepared next/call2.sh (every ping-pong config, both ring sizes, swept on
# 12288 x 4096, 4096 x 12288 and the LM head at BT 1024; sweep2.tgz), then the one GPU kernel test call 1's
# `-k ring` left running at its 220 s limit (450 of 451 passed): the fidelity ordering test, alone.
set -u
OUT=${OUT:-/tmp/out}
WARM_TIMEOUT=150 bash results/2026-12-03/session27/next/call2.sh
timeout 90 python3 -m pytest -v -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k fidelity_ordering --durations=3 -W ignore > "$OUT/fidelity.log" 2>&1
echo "fidelity rc $?"; tail -n 6 "$OUT/fidelity.log"
