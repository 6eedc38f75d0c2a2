#!/usr/bin/env bash
# Session 14, device call 3: the tall ping-pong candidate ("gluon_tall", configs.CANDIDATES) and the
# schedule-generalized consumer/producer. ab_base = HEAD's package (git archive HEAD forge_mcore).
# Gluon GPU tests (now with the candidates), bits of the committed configs vs HEAD, same-call A/B of
# the committed configs (regression check).
set -u
OUT=${OUT:-/tmp/out}
export FORGE_AUTOTUNE=0
TIMEOUT=330 bash scripts/device/gluon_tests.sh  # (the same command, factored out after the call)
python3 scripts/device/step_bits.py save ab_base /tmp/bits_base.pt
python3 scripts/device/step_bits.py save . /tmp/bits_new.pt
python3 scripts/device/step_bits.py compare /tmp/bits_base.pt /tmp/bits_new.pt | tee $OUT/bits.txt
ARGS="--shapes 4096x4096,12288x4096,1024x4096 --bts 512,1024,4096 --arms adamw-bf16,adamw-int8 --reps 30" RUN_TIMEOUT=90 bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
cat $OUT/ab.txt
cd $OUT && tar czf runs.tgz */ *.log && rm -rf */ *.log
