#!/usr/bin/env bash
# Session 32, device call 7 (at the revert of the step-size fold): the lr-0 tests on one config of each Gluon
# kernel, with their bf16 moments compared within two bf16 roundings (call 6 compared them at fp32's tolerance).
#   bash results/2026-12-04/session32/call7.sh
set -u
OUT=${OUT:-/tmp/out}
SELECT="lr_zero" NAME=lr_zero TIMEOUT=${TEST_TIMEOUT:-150} WORKERS=8 bash results/2026-12-04/session31/call3.sh
