#!/usr/bin/env bash
# Prepared in session 51 for a later call (not run): wave_sync's 600 k-cycle twin against every other H100 row at
# BT >= 4096 that calls 4-5 did not time (SGD-m and Lion on the LM head and 12288 x 4096, every arm on 4096^2 at
# BT 16384, 12288 x 4096 and 4096 x 12288 at BT 4096); an arm whose row already waits compares with itself and is
# dropped. `serial_rows.py` then sets each cell whose twin won and is in CONFIGS (the tall and cooperative-tall
# geometries of kernels/configs.py's session-51 twins); a win on another geometry wants its twin added first.
# Preflight (no GPU): CHECK=1 DEVICE="NVIDIA H100 80GB HBM3" REFERENCE=winner CELLS=... ARMS=... VARY=wave_sync=600000
# python3 scripts/device/config_ab.py (run in session 51: applies to all 10 references).
# On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session51/next_twins.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab twins_lm16k 151936x4096:16384 sgdm-bf16,lion-bf16 "wave_sync=600000"
ab twins_lm4k 151936x4096:4096 sgdm-bf16,lion-bf16 "wave_sync=600000"
ab twins_4k 12288x4096:16384,12288x4096:4096,4096x4096:16384,4096x12288:4096 \
  adamw-bf16,adamw-int8,sgdm-bf16,lion-bf16 "wave_sync=600000"
for d in twins_lm16k twins_lm4k twins_4k; do
  python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" "$OUT/$d/config_ab.csv"
done
cp forge_mcore/kernels/winners.csv "$OUT/"
