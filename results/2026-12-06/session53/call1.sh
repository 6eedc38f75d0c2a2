#!/usr/bin/env bash
# Session 53, first call: on an H200 session 47's h200_call1.sh (via the prologue). On any other card session 52's
# call 7 (the tall kernel's 600 k twins against the cooperative-tall rows at the LM head's BT 16384, int8 and bf16;
# serial_rows.py sets a twin that won), then the acceptance grid on the rows that call leaves, all in one tarball.
#   bash results/2026-12-06/session53/call1.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab tall16k 151936x4096:16384 adamw-int8,adamw-bf16 \
  "kernel=gluon_tall,block_m=128,block_k=64,num_stages=5,epilogue_stages=1;kernel=gluon_tall,block_m=128,block_k=64,num_stages=4,epilogue_stages=2"
python3 results/2026-12-06/session46/serial_rows.py "NVIDIA H100 80GB HBM3" "$OUT/tall16k/config_ab.csv"
cp forge_mcore/kernels/winners.csv "$OUT/tall16k/"
git diff --stat -- forge_mcore/kernels/winners.csv
(cd "$OUT" && tar czf tall16k.tgz tall16k && rm -rf tall16k)  # (back even if the grid is cut short)
GRID_TIMEOUT=${GRID_TIMEOUT:-330} bash results/2026-12-01/session15/call4.sh
