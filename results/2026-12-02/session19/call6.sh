#!/usr/bin/env bash
# Session 19 call 6: the whole Gluon GPU suite on this commit and step_bits.py against ab_base, the package
# before gluon_coop_tall (built first, here: rm -rf ab_base && mkdir ab_base &&
# git archive 99594bf forge_mcore | tar -x -C ab_base). As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
TREE=. BASE=ab_base OUT=${OUT:-/tmp/out} TEST_TIMEOUT=300 exec timeout 520 bash scripts/device/check_tree.sh
