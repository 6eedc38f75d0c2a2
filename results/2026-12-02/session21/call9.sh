#!/usr/bin/env bash
# Session 21 call 9: every Gluon GPU test on the producer-issued stores (94eb2a1), under the 287 s of
# device time left (so no step_bits.py against the package before it this session). As run:
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0
OUT=${OUT:-/tmp/out} TIMEOUT=175 bash scripts/device/gluon_tests.sh
