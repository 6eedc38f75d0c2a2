#!/usr/bin/env bash
# Session 18 call 5 (warm after call 4; typed as the run command): the acceptance grid on the
# wide-wgmma tree with call 1's winners.
GRID_TIMEOUT=330 timeout 400 bash results/2026-12-01/session15/call4.sh 2>&1 | tail -8
