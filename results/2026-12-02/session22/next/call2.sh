#!/usr/bin/env bash
# For the session after 22, a second device call (not run): energy per step of the two ping-pong
# geometries on the power-bound BT 1024 cells (scripts/device/clock_probe.py windows; energy = (W - the
# sleep arm's W) x time, results/2026-12-02/session22/power_bound.py's model). The tall 128-row tile reads
# 32 B of slabs per output and k-step against the 64-row tile's 48: if it costs less energy per step
# there, the power-bound cells want it even where it is not faster at a free clock.
export PYTHONPATH=$PWD FORGE_AUTOTUNE=0 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
CELLS="4096x4096:1024:adamw-bf16+adamw-bf16@kernel=gluon_tall,block_m=128,num_stages=4+lion-bf16+lion-bf16@kernel=gluon_ws,block_m=64+mainloop:adamw-bf16+cublas+copy:adamw-bf16+sleep" \
  OUT=$OUT timeout 200 python3 scripts/device/clock_probe.py 2>&1 | grep -v Warn
