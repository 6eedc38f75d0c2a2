#!/usr/bin/env bash
# Session 20, call 3 (after calls 1a/1b again: pieces 0 and 1 in /tmp/tp): the multicast probe timed
# in CUDA graphs (call 2's do_bench timed the host's Gluon launch at small cells), the first Gluon
# parity failures under 3.9 with their tracebacks, and the Gluon parity tests on 3.6 for this tree.
export PYTHONPATH=$PWD TRITON_DEFAULT_FP_FUSION=1 TRITON_BACKENDS_IN_TREE=1
mkdir -p $OUT/probe $OUT/tests39 $OUT/tests36
cp -r /tmp/tp/* .triton_parts/3.9.0/ 2>/dev/null
python3 scripts/device/triton_parts.py unpack 3.9.0 || exit 1
SITE=$PWD/.triton_parts/3.9.0/site
P39="env PYTHONPATH=$SITE:$PYTHONPATH TRITON_PTXAS_BLACKWELL_PATH=$SITE/triton/backends/nvidia/bin/ptxas"
$P39 timeout 200 python3 scripts/device/multicast_probe.py --out $OUT/probe --reps 100 > $OUT/probe/probe.log 2>&1
echo "probe rc $?"; grep '^{' $OUT/probe/probe.log
$P39 timeout 120 python3 -m pytest -x -q --tb=short -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
  -k "gluon_kernel_at_parity" > $OUT/tests39/tests.log 2>&1; echo "3.9 parity rc $?"
grep -v Warning $OUT/tests39/tests.log | grep -v "warner(" | tail -n 40 | cut -c1-250
timeout 150 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider -n 8 \
  -k "gluon_kernel_at_parity or main_loop or poisoned" > $OUT/tests36/tests.log 2>&1; echo "3.6 rc $?"; tail -n 2 $OUT/tests36/tests.log
cd $OUT && tar -czf ../session20_call3.tgz . && mv ../session20_call3.tgz .
