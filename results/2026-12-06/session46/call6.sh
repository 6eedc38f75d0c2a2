#!/usr/bin/env bash
# Session 46, device call 6: serial_fills (it ran on a patch of the tree that commit 5e44d6f merged) against the
# AdamW bf16 and int8 ring winners at BT 1024 on every shape but the LM head (call 1 had 1024 x 4096 and 4096^2 at
# 1.008-1.017x), seven rounds, bits checked first. On the tree since, the H100's rows there are the twins.
#   bash results/2026-12-06/session46/call6.sh     (device, repository root; writes $OUT)
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/card.txt"
CELLS=1024x4096:1024,4096x4096:1024,12288x4096:1024,4096x12288:1024
for cell in ${CELLS//,/ }; do
  for arm in adamw-bf16 adamw-int8; do
    REFERENCE=winner VARY="serial_fills=True" WARM_ONLY=1 CELLS=$cell ARMS=$arm \
      timeout 200 python3 scripts/device/config_ab.py > "$OUT/warm_${cell}_$arm.log" 2>&1 &
  done
done
wait
cat "$OUT"/warm_*.log | grep -c '"bits_equal": \[true, true\]'
REFERENCE=winner VARY="serial_fills=True" ROUNDS=7 CELLS=$CELLS ARMS=adamw-bf16,adamw-int8 \
  timeout 300 python3 scripts/device/config_ab.py > "$OUT/ab.log" 2>&1
echo "== ab rc $?"
sed -n '/^summary:/,$p' "$OUT/ab.log"
tar czf "$OUT/warm.tgz" -C "$OUT" $(cd "$OUT" && ls warm_*.log) && rm -f "$OUT"/warm_*.log
