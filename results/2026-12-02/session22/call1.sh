#!/usr/bin/env bash
# Session 22, call 1: the Gluon GPU tests on main, that is the
# producer-issued stores (94eb2a1; session 21 ran 330 of ~457 on it before its device time ran out) and
# the helper that replaced their four near-copies afterwards (same SASS instruction counts, never run
# on a GPU), and the bits of two AdamW steps against the package before them. Locally first:
#   rm -rf ab_base && mkdir ab_base && git archive 0f42bc7 forge_mcore | tar -x -C ab_base
# then, as a device call (remove ab_base before committing):
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
TREE=. BASE=ab_base OUT=${OUT:-/tmp/out} TEST_TIMEOUT=300 exec timeout 420 bash scripts/device/check_tree.sh
