#!/usr/bin/env bash
# Session 18 call 4 (warm after call 3; typed as the run command): the whole Gluon GPU suite and
# step_bits.py on the working tree (wide_mma.patch) against ab_base (HEAD before it).
set -u
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0; mkdir -p $OUT
TREE=. BASE=ab_base OUT=$OUT TEST_TIMEOUT=280 timeout 560 bash scripts/device/check_tree.sh 2>&1 | tail -12
cd $OUT && tar czf /tmp/c.tgz . && rm -rf $OUT/* && mv /tmp/c.tgz $OUT/
