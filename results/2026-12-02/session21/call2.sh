#!/usr/bin/env bash
# Session 21 call 2: ping-pong without tile buffers (TileConfig.epilogue_stages 0: the rule loads and
# stores the weight and states itself, L2-prefetched by the tile producer; configs.CANDIDATES). Its GPU
# tests, then per BT <= 1024 cell and arm the committed winner against ping-pong without buffers
# (five- and eight-deep ring) and with them (the committed ping-pong config), bits first. As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUT/gpu.txt"
timeout 240 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -k "e0-gluon_ws" \
  -n 8 > "$OUT/tests.log" 2>&1
echo "tests rc $?"; tail -n 2 "$OUT/tests.log"; grep FAILED "$OUT/tests.log" | head -5
WS="kernel=gluon_ws,block_m=64"
export REFERENCE=winner ROUNDS=3 VARY="$WS,epilogue_stages=0,num_stages=5;$WS,epilogue_stages=0,num_stages=8;$WS,epilogue_stages=2,num_stages=5"
JOBS="4096x4096:512,4096x4096:1024,1024x4096:512,1024x4096:1024,12288x4096:1024:adamw-bf16,sgdm-bf16,lion-bf16
4096x4096:512,4096x4096:1024,1024x4096:1024:adamw-int8
12288x4096:512,4096x12288:512,4096x12288:1024,151936x4096:512,151936x4096:1024:adamw-bf16" \
  OUT=$OUT bash scripts/device/config_ab_jobs.sh
