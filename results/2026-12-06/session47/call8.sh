#!/usr/bin/env bash
# Session 47, device call 8: on an H200 h200_call1.sh; elsewhere the card's identity, then the H100's cells nearest
# their thresholds in call 4's grid against CONFIGS twins (config_ab.py, interleaved, bits checked, five rounds):
# 1024 x 4096 SGD-m and Lion BT 1024 (60.0%, 60.3%; two-buffer ring, seven stages), 12288 x 4096 SGD-m BT 16384
# (0.964x; cooperative), 4096 x 12288 AdamW bf16 BT 16384 (0.969x; tall, one shared buffer).
#   bash results/2026-12-06/session47/call8.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab small 1024x4096:1024 sgdm-bf16,lion-bf16 \
  "tile_ring=3;tile_ring=3,fast_division=True,first_fill_after=2;num_stages=8;serial_fills=True"
ab sgdm16k 12288x4096:16384 sgdm-bf16 \
  "kernel=gluon_coop_tall,block_m=256,block_k=32,num_stages=6;kernel=gluon_tall;block_k=32,num_stages=8"
ab adamw16k 4096x12288:16384 adamw-bf16 \
  "kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2;epilogue_stages=2,num_stages=4;kernel=gluon_coop,num_stages=4,epilogue_stages=2"
