#!/usr/bin/env bash
# For the next session that gets an H200 (it stops at once on any other card): the H200's winners against their
# serial_fills twins at AdamW BT 1024 (bf16 and int8, four shapes) and against their first_fill_after twins at
# BT 512 (1024 x 4096 and 4096^2, four arms: session 45's call11 without its grid), bits checked first; the H200's
# rows set to the serial twins that won (serial_rows.py) and to the first_fill_after twins (set_first_fill.py);
# the resulting winners.csv comes back in $OUT. Commit it, then run the grid on it in the next call:
#   GRID_TIMEOUT=400 bash results/2026-12-01/session15/call4.sh
# and keep a first_fill_after row only where the grid's cell is faster than session 40's (kernel.csv).
#   bash results/2026-12-06/session46/h200.sh     (device, repository root; writes $OUT)
#   PARTS=serial (or after) runs one half (~4 minutes cold instead of ~7).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
grep -q H200 "$OUT/card.txt" || { echo "not an H200: stopped"; exit 0; }
SERIAL_CELLS=1024x4096:1024,4096x4096:1024,12288x4096:1024,4096x12288:1024
AFTER_CELLS=1024x4096:512,4096x4096:512
PARTS=${PARTS:-serial after}
[[ $PARTS == *serial* ]] || SERIAL_CELLS=
[[ $PARTS == *after* ]] || AFTER_CELLS=
mkdir -p "$OUT/serial" "$OUT/after"
for cell in ${SERIAL_CELLS//,/ }; do
  for arm in adamw-bf16 adamw-int8; do
    REFERENCE=winner VARY="serial_fills=True" WARM_ONLY=1 CELLS=$cell ARMS=$arm \
      timeout 240 python3 scripts/device/config_ab.py > "$OUT/serial/warm_${cell}_$arm.log" 2>&1 &
  done
done
for arm in ${AFTER_CELLS:+sgdm-bf16 lion-bf16 adamw-bf16 adamw-int8}; do
  REFERENCE=winner VARY="first_fill_after=2" WARM_ONLY=1 CELLS=$AFTER_CELLS ARMS=$arm \
    timeout 240 python3 scripts/device/config_ab.py > "$OUT/after/warm_$arm.log" 2>&1 &
done
wait
if [ -n "$SERIAL_CELLS" ]; then
  OUT=$OUT/serial REFERENCE=winner VARY="serial_fills=True" ROUNDS=5 CELLS=$SERIAL_CELLS ARMS=adamw-bf16,adamw-int8 \
    timeout 150 python3 scripts/device/config_ab.py > "$OUT/serial/ab.log" 2>&1
  echo "== serial ab rc $?"; sed -n '/^summary:/,$p' "$OUT/serial/ab.log"
  python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H200" "$OUT/serial/config_ab.csv"
fi
if [ -n "$AFTER_CELLS" ]; then
  OUT=$OUT/after REFERENCE=winner VARY="first_fill_after=2" ROUNDS=5 CELLS=$AFTER_CELLS \
    ARMS=sgdm-bf16,lion-bf16,adamw-bf16,adamw-int8 timeout 150 python3 scripts/device/config_ab.py > "$OUT/after/ab.log" 2>&1
  echo "== first_fill_after ab rc $?"; sed -n '/^summary:/,$p' "$OUT/after/ab.log"
  python3 results/2026-12-06/session45/set_first_fill.py "NVIDIA H200" 2 1024x4096:512 4096x4096:512
fi
cp forge_mcore/kernels/winners.csv "$OUT/"
tar czf "$OUT/logs.tgz" -C "$OUT" serial after && rm -rf "$OUT/serial" "$OUT/after"
