#!/usr/bin/env bash
# Session 20, call 4: every Gluon GPU test on Triton 3.6 for this tree (the renamed-op aliases in
# kernels/gluon_wgrad.py), cold.
export PYTHONPATH=$PWD
OUT=$OUT TIMEOUT=330 bash scripts/device/gluon_tests.sh
