#!/usr/bin/env bash
# Compiles every config a kernel-bench sweep will time, one process per arm in parallel (a one-rep
# sweep of one shape, thrown away), so the timed sweep that follows in one process finds Triton's
# cache warm (the Gluon kernels compile serially inside a sweep: minutes of a device call).
#   device call, from the repository root:  SHAPE=12288x4096 SWEEP="--sweep ..." bash scripts/device/warm_sweep.sh
# env: ARMS (default the four grid arms), SHAPE, SWEEP (the timed sweep's --sweep options), WARM_TIMEOUT.
set -u
for arm in ${ARMS:-adamw-bf16 adamw-int8 sgdm-bf16 lion-bf16}; do
  timeout "${WARM_TIMEOUT:-200}" python3 -m forge_mcore.bench.kernel --out "/tmp/warm_$arm" --shapes "$SHAPE" \
    --bts 512 --arms "$arm" --reps 1 $SWEEP > "/tmp/warm_$arm.log" 2>&1 &
done
wait
echo "warm done; errors in: $(grep -il error /tmp/warm_*.log | tr '\n' ' ')"
