#!/usr/bin/env bash
# Session 47, device call 10: on an H200 h200_call1.sh; elsewhere the card's identity, then the LM head's rows
# nearest their thresholds in call 9's grid against CONFIGS twins (config_ab.py, interleaved, bits checked, five
# rounds): AdamW bf16 and int8 at BT 4096 (int8 0.943 of bf16; both borrowed tall rows) against cooperative tall
# (which the H100 runs at BT 16384), and Lion at BT 1024 (58.2%; tall) against cooperative tall and other tall rings.
#   bash results/2026-12-06/session47/call10.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
ab lm4k_bf16 151936x4096:4096 adamw-bf16 \
  "kernel=gluon_coop_tall,block_m=256,block_k=32,num_stages=5;kernel=gluon_coop_tall,block_m=256,block_k=32,num_stages=6"
ab lm4k_int8 151936x4096:4096 adamw-int8 \
  "kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2;kernel=gluon_coop_tall,block_m=256,block_k=32,epilogue_stages=2,num_stages=6,fast_division=True"
ab lm1k_lion 151936x4096:1024 lion-bf16 \
  "kernel=gluon_coop_tall,block_m=256,block_k=32;num_stages=4;epilogue_stages=1"
