#!/usr/bin/env bash
# Session 21 call 9: every Gluon GPU test on the producer-issued stores (the commit before this script),
# then the bits of two AdamW steps (bf16 and int8 states) against ab_base (the package before it,
# `git archive 0f42bc7 forge_mcore`; scripts/device/check_tree.sh). As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
TREE=. BASE=ab_base OUT=${OUT:-/tmp/out} TEST_TIMEOUT=190 exec timeout 270 bash scripts/device/check_tree.sh
