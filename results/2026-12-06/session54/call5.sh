#!/usr/bin/env bash
# Session 54, call 5: the grid's LM head cells at BT 512 for SGD-m and Lion on the two H100 rows set from call 4 (the
# tall kernel with a buffer per pass, TileConfig.epilogue_stages 4): % of floor by the acceptance method, with the
# copy and cuBLAS ceilings measured in the call. On an H200 session 47's h200_call1.sh runs instead.
#   bash results/2026-12-06/session54/call5.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
timeout 150 python3 -m forge_mcore.bench.kernel --out "$OUT/grid" --shapes 151936x4096 --bts 512 \
  --arms sgdm-bf16,lion-bf16 --reps 30 > "$OUT/grid.log" 2>&1
echo "grid rc $?"; tail -n 4 "$OUT/grid.log"; rm -f "$OUT"/grid/*.png
