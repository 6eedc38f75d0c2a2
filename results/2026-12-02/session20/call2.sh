#!/usr/bin/env bash
# Session 20, call 2 (warm, right after call 1): carries the last piece of Triton 3.9.0, unpacks it,
# then (1) the 2-CTA multicast probe under 3.9, (2) the committed kernel on 3.6 vs 3.9 on BT <= 1024
# cells (scripts/device/code_ab.sh, runs new = 3.6, t39, new2 = 3.6), (3) the Gluon GPU tests on 3.9.
export PYTHONPATH=$PWD TRITON_DEFAULT_FP_FUSION=1 TRITON_BACKENDS_IN_TREE=1
mkdir -p $OUT/probe $OUT/ab $OUT/tests39
cp -r /tmp/tp/* .triton_parts/3.9.0/ 2>/dev/null  # pieces 0 and 1, saved by calls 1a and 1b
python3 scripts/device/triton_parts.py unpack 3.9.0 || exit 1
SITE=$PWD/.triton_parts/3.9.0/site
# 3.9 compiles sm_90 with its "ptxas-blackwell" (left out of the carried copy); its CUDA 12.9 ptxas does
export TRITON_PTXAS_BLACKWELL_PATH=$SITE/triton/backends/nvidia/bin/ptxas
PYTHONPATH=$SITE:$PYTHONPATH python3 -c "import triton; print('triton', triton.__version__, triton.__file__)"
PYTHONPATH=$SITE:$PYTHONPATH timeout 180 python3 scripts/device/multicast_probe.py --out $OUT/probe \
  > $OUT/probe/probe.log 2>&1; echo "probe rc $?"; tail -n 12 $OUT/probe/probe.log
OUT=$OUT/ab RUN_TIMEOUT=110 TREES="t39:.:.triton_parts/3.9.0/site" RATIO=adamw-bf16/sgdm-bf16 \
  ARGS="--shapes 4096x4096,1024x4096,12288x4096 --bts 512,1024 --arms adamw-bf16,adamw-int8,sgdm-bf16 --reps 30" \
  bash scripts/device/code_ab.sh 2>&1 | tail -n 30
PYTHONPATH=$SITE:$PYTHONPATH OUT=$OUT/tests39 TIMEOUT=170 bash scripts/device/gluon_tests.sh
cd $OUT && tar -czf ../session20_call2.tgz . && mv ../session20_call2.tgz . ; ls
