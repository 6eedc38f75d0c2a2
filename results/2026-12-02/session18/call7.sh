#!/usr/bin/env bash
# Session 18 call 7 (warm after call 6, its winners.csv copied into forge_mcore/kernels/ first; typed
# as the run command): the acceptance grid.
GRID_TIMEOUT=330 timeout 400 bash results/2026-12-01/session15/call4.sh 2>&1 | tail -8
