#!/usr/bin/env bash
# Session 20, calls 1a and 1b (1a cold): carry pieces 0 and 1 of Triton 3.9.0
# (scripts/device/triton_parts.py). The repository folder is copied afresh each call: the pieces
# wait in /tmp for call 2.
mkdir -p /tmp/tp && cp -r .triton_parts/3.9.0/* /tmp/tp/ && ls -la /tmp/tp/*; nvidia-smi -L; python3 -c "import triton; print(triton.__version__)"
