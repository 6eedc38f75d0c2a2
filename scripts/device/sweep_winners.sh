#!/usr/bin/env bash
# A config sweep and its winners in one device call: `python -m forge_mcore.bench.kernel --sweep` over
# SHAPES x BTS x ARMS with the CONFIGS and CANDIDATES of KERNELS (interleaved per cell), then --winners
# on its CSV into the device's copy of forge_mcore/kernels/winners.csv, copied to $OUT/winners.csv
# (copy it back into the checkout: the device works on a copy of the tree).
#   device call, from the repository root, PYTHONPATH=$PWD FORGE_AUTOTUNE=0 exported:
#   SHAPES=4096x4096 BTS=512,1024 ARMS=adamw-bf16,sgdm-bf16 KERNELS=gluon_ws,gluon_tall TIMEOUT=170 \
#     OUT=$OUT bash scripts/device/sweep_winners.sh      (NAME: the output folder, REPS, SHOW: table rows)
set -u
OUT=${OUT:-/tmp/out}
NAME=${NAME:-sw}
timeout "${TIMEOUT:-300}" python3 -m forge_mcore.bench.kernel --out "$OUT/$NAME" --shapes "$SHAPES" --bts "$BTS" \
  --arms "$ARMS" --sweep --sweep-configs all --sweep-kernels "$KERNELS" --reps "${REPS:-20}" > "$OUT/$NAME.log" 2>&1
echo "sweep rc $?"; grep "^| " "$OUT/$NAME.log" | tail -n "${SHOW:-40}"
python3 -m forge_mcore.bench.kernel --winners "$OUT/$NAME/kernel.csv" 2>&1 | tail -n 1
cp forge_mcore/kernels/winners.csv "$OUT/winners.csv"
rm -f "$OUT/$NAME/kernel_bench.png"
