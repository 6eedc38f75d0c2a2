#!/usr/bin/env bash
# Session 51, device call 6: wave_sync as committed (600 k cycles; a program whose wait past round 0 timed out
# waits no more in that launch; an int64 arrival count that no launch resets), on the H100 rows calls 4-5 set.
# First its GPU tests (bits equal to the unsynced step with waits that all time out and with waits that none
# do, every launch's arrivals counted; the three synced configs' parity, poisoned-tile and main-loop tests);
# then the grid's LM head cells at BT 16384 and 4096, AdamW bf16 and int8 (int8 timed beside bf16, both against
# their baselines: the int8 target); then the LM head's int8 row at BT 16384 against its unsynced twin.
# On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session51/call6.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/functional/test_kernel_gpu.py \
  -k "wave600000 and (parity or poisoned or main_loop_only) or wave_sync_changes_no_bit" 2>&1 | tail -3
timeout 240 python3 -m forge_mcore.bench.kernel --out "$OUT/grid" --shapes 151936x4096 --bts 16384,4096 \
  --arms adamw-bf16,adamw-int8 --reps 30 > "$OUT/grid.log" 2>&1
echo "grid rc $?"; tail -n 12 "$OUT/grid.log"; rm -f "$OUT"/grid/*.png
ab wave_off 151936x4096:16384 adamw-int8 "wave_sync=0"
