#!/usr/bin/env bash
# Prepared in session 27, not run: the L2-prefetching tile rings (configs.CANDIDATES: each next
# unit's weight and state lines asked into L2 a turn before its fills, `gluon_wgrad._prefetch_unit_l2`)
# swept beside the committed winners on 1024 x 4096 and 4096² at BT 512/1024, after their GPU tests
# (call1.sh's `-k ring` runs them: their ids end in -ring2/-ring3 with p1). Tarred as sweep3.tgz.
# If one wins: move it into CONFIGS, then `--winners <dir>/sweep/kernel.csv` locally.
SHAPES=1024x4096,4096x4096 BTS=512,1024 SWEEP_CONFIGS=candidates SWEEP_TIMEOUT=200 TAR=sweep3 \
  bash scripts/device/sweep_call.sh
