#!/usr/bin/env bash
# Session 22 call 7: SM clock and power per arm at BT <= 1024 (call7/clock_oob.py over scripts/device/clock_probe.py),
# the step, its OOB twin (call4/oob_tiles.patch applied), its main loop alone, cuBLAS.
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
OUT=$OUT timeout 200 python3 results/2026-12-02/session22/call7/clock_oob.py 2>&1 | grep -v Warn
