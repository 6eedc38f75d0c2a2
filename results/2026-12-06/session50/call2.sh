#!/usr/bin/env bash
# Session 50, device call 2: call 1's Nsight put the tall int8 row's L2 hit rate at 43% on an H100 (the
# cooperative-tall row's 66-69%, session 48): the tall row with smaller and larger tile groups (group_m 2, 4, 16)
# against the LM head's int8 BT 16384 row, and the row's bf16 twin for the ratio's other side.
#   bash results/2026-12-06/session50/call2.sh     (device, repository root; writes $OUT)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
TALL="kernel=gluon_tall,block_m=128,block_k=64,epilogue_stages=1"
ab tall_order 151936x4096:16384 adamw-int8 "$TALL,group_m=2;$TALL,group_m=4;$TALL,group_m=16"
