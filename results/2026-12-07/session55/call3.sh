#!/usr/bin/env bash
# Session 55, call 3: on an H200 the acceptance grid (call1.sh: the first H200 grid since session 40); on any other
# card its identity, then the single-GPU suite on this tree as session 48's calls 2-3 ran it (the last whole run;
# since then the `wave_sync` and pass-buffer configs and their rows): the kernel tests outside the LM head on ten
# workers and the nn tests, then the LM head's on one (LM=0 leaves them out: they take ~110 s). REST_SELECT narrows
# the first part (e.g. REST_SELECT="tall and not 151936": the tall and cooperative-tall configs, whose unit code
# 65b1333 changed after session 54's GPU tests ran); NN= leaves the nn tests out.
#   bash results/2026-12-07/session55/call3.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash results/2026-12-07/session55/call1.sh; exit
fi
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$OUT/card.txt"
SELECT=${REST_SELECT:-not 151936} NAME=rest WORKERS=10 TIMEOUT=${REST_TIMEOUT:-400} NN=${NN-1} bash results/2026-12-04/session31/call3.sh
[ "${LM:-1}" = 0 ] || SELECT="151936" NAME=lm WORKERS=1 TIMEOUT=110 bash results/2026-12-04/session31/call3.sh
