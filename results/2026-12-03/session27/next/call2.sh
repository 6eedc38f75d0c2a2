#!/usr/bin/env bash
# Prepared in session 27, not run: every ping-pong config (the two-half ring and the prefetching
# candidates among them) swept on 12288 x 4096, 4096 x 12288 and the LM head at BT 1024; tarred as
# sweep2.tgz. Locally afterwards:  python -m forge_mcore.bench.kernel --winners <dir>/sweep/kernel.csv
SHAPES=12288x4096,4096x12288,151936x4096 BTS=1024 SWEEP_TIMEOUT=300 TAR=sweep2 bash scripts/device/sweep_call.sh
