#!/usr/bin/env bash
# Session 13, device call 4 (main with the int8 changes and the rule loop): every GPU kernel test,
# then the AdamW acceptance grid (5 shapes x 4 BTs, bf16 and int8 moments, committed winners).
set -u
OUT=${OUT:-/tmp/out}; T0=$SECONDS
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu_tests.log
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout 300 python3 -m pytest -m gpu tests/functional/test_kernel_gpu.py \
  -q -p no:cacheprovider -n 8 --dist loadgroup --tb=short -rfE >> $OUT/gpu_tests.log 2>&1; echo "rc $?" >> $OUT/gpu_tests.log
FORGE_AUTOTUNE=0 timeout $((570 - (SECONDS - T0))) python3 -m forge_mcore.bench.kernel --out $OUT/grid \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096,151936x4096 --bts 512,1024,4096,16384 \
  --arms adamw-bf16,adamw-int8 > $OUT/grid.log 2>&1
rm -f $OUT/grid/kernel_bench.png
