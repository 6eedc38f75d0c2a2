#!/usr/bin/env bash
# Session 21 call 3: what made call 2's buffer-less ping-pong slow, its loads or its stores. A third
# variant (working tree only, not committed: TileConfig.epilogue_stages 3 on gluon_ws) keeps the TMA
# fills into a buffer per consumer and stores the rule's results straight from registers (no TMA
# stores). Per cell and arm: the committed winner, that variant, and (for tall winners) ping-pong. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
WS="kernel=gluon_ws,block_m=64"
export REFERENCE=winner ROUNDS=3 VARY="$WS,epilogue_stages=3,num_stages=5;$WS,epilogue_stages=2,num_stages=5"
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:512:adamw-bf16
4096x4096:512,1024x4096:512:sgdm-bf16,lion-bf16
4096x4096:1024:adamw-int8" OUT=$OUT bash scripts/device/config_ab_jobs.sh
