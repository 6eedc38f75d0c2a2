#!/usr/bin/env bash
# Session 50, device call 3: the LM head's int8 BT 16384 row (cooperative tall) against its fields not yet varied
# there on an H100: the tiles through the load/store unit, and BLOCK_K 64 slabs in a two- or three-deep ring (the
# first try asked for one epilogue stage and prefetch, which a cooperative-tall config refuses: its ValueError).
#   bash results/2026-12-06/session50/call3.sh     (device, repository root; writes $OUT)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
ab coop_fields 151936x4096:16384 adamw-int8 "tile_fill=lsu;block_k=64,num_stages=3;block_k=64,num_stages=2"
