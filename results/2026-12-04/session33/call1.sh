#!/usr/bin/env bash
# Session 33, device call 1 (int8 codes in fragment order, the commit after 2f9f0c7): the 8 Gluon lr-0 tests
# session 32 could not run, then every int8 GPU test of test_kernel_gpu.py (406 in session 32; GLUON_SHAPES'
# 1000 x 784 has a partial last block, stored whole), then (session 35) the nn GPU tests.
#   bash results/2026-12-04/session33/call1.sh
set -u
OUT=${OUT:-/tmp/out}
SELECT="lr_zero" NAME=lr_zero WORKERS=8 TIMEOUT=150 bash results/2026-12-04/session31/call3.sh
SELECT="int8" NAME=int8 TIMEOUT=${TEST_TIMEOUT:-300} bash results/2026-12-04/session31/call3.sh
# session 35: the nn GPU tests on its patch() changes (CPU-tested only); 406 int8 tests took 165 s in session 32
TIMEOUT=140 bash results/2026-12-05/session35/nn_gpu.sh
(cd "$OUT" && tar czf /tmp/call1.tgz . && mv /tmp/call1.tgz "$OUT/")
