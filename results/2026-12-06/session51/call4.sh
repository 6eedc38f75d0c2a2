#!/usr/bin/env bash
# Session 51, device call 4: the programs of a round of tiles held together (TileConfig.wave_sync, new) on the LM
# head's AdamW at BT 16384. Calls 1-2: the step's DRAM reads vary 40-82 GB between profiles of one config (its
# main loop alone 61-62 GB, ~26 GB if a round's programs read each slab at the same k), and int8's loss to bf16
# moves with them. First the GPU test of the new field (bits equal to the unsynced step's, eagerly and in a
# graph; counters zeroed after each launch); then config_ab.py (committed rows against waits of 30k, 150k,
# 600k cycles: a round is ~300k), int8 and bf16; then Nsight's DRAM bytes and L2 hits of the 150k arm.
# On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session51/call4.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
timeout 150 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -k wave_sync -p no:cacheprovider 2>&1 | tail -5
ab wave_lm16k 151936x4096:16384 adamw-int8,adamw-bf16 "wave_sync=30000;wave_sync=150000;wave_sync=600000"
m=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
CELLS="151936x4096:16384:adamw-int8 151936x4096:16384:adamw-bf16" GLUON_FLAGS=1 REPLACE=wave_sync=150000 \
  SECTIONS="--metrics $m" NCU_TIMEOUT=120 bash scripts/device/ncu_kernel.sh 2>&1 | grep -v "^ *$"
mkdir -p /tmp/ncu4 && tar -C /tmp/ncu4 -xzf "$OUT/ncu.tgz"
for f in /tmp/ncu4/ncu/*.txt; do echo "== $(basename "$f")"; grep -E "__" "$f"; done | tee "$OUT/metrics_by_arm.txt"
