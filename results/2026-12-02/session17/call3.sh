#!/usr/bin/env bash
# Session 17 call 3: how much of a graph-timed call was the host submitting the replay
# (scripts/device/timing_lead.py: idle vs lead, alternating), then the acceptance grid timed with
# the lead (bench.common.time_graph's default since this session) on main: Lion's new winners,
# the rule_instructions change.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 120 python3 scripts/device/timing_lead.py > $OUT/timing_lead.log 2>&1
echo "timing_lead rc $?"; cat $OUT/timing_lead.log | tail -n 8
GRID_TIMEOUT=300 bash results/2026-12-01/session15/call4.sh
