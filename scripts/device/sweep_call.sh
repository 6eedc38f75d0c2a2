#!/usr/bin/env bash
# A device call's ping-pong sweep: every config the sweep times compiled first (warm_sweep.sh), then one
# timed sweep of the four grid arms, its rows (kernel.csv, sweep.csv, log) tarred into $OUT/$TAR.tgz
# (the device tool returns a limited number of files). Afterwards, locally:
#   python -m forge_mcore.bench.kernel --winners <dir>/sweep/kernel.csv
#   device call, from the repository root:  SHAPES=1024x4096,4096x4096 BTS=512,1024 bash scripts/device/sweep_call.sh
# env: SHAPES, BTS, SWEEP_CONFIGS (all: CONFIGS and CANDIDATES; candidates), SWEEP_TIMEOUT, TAR.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
SWEEP="--sweep --sweep-configs ${SWEEP_CONFIGS:-all} --sweep-kernels gluon_ws"
SHAPE=${SHAPES%%,*} SWEEP="$SWEEP" bash scripts/device/warm_sweep.sh
timeout "${SWEEP_TIMEOUT:-300}" python3 -m forge_mcore.bench.kernel --out "$OUT/sweep" --shapes "${SHAPES:?}" \
  --bts "${BTS:?}" --arms adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 $SWEEP > "$OUT/sweep.log" 2>&1
echo "sweep rc $?"; rm -f "$OUT"/sweep/*.png
TAR=${TAR:-sweep}
mkdir -p "$OUT/sweep"  # (a sweep that failed before writing: its log still comes back)
cd "$OUT" && tar czf "/tmp/$TAR.tgz" sweep sweep.log && rm -rf sweep sweep.log && mv "/tmp/$TAR.tgz" "$OUT/"
