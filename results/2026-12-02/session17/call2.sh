#!/usr/bin/env bash
# Session 17 call 2 (session 16's next/call1.sh, second half, run warm after call 1): A/B of
# rule_instructions.patch at BT 512/1024, then the phase timeline of AdamW bf16 at BT 512/1024.
set -u
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 PYTHONPATH=$PWD
TREES="rules:ab_rules" RATIO=adamw-int8/adamw-bf16 RUN_TIMEOUT=90 \
  ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,lion-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
grep -v "/" $OUT/ab.txt
timeout 100 python3 -m forge_mcore.bench.timeline --out $OUT/timeline --shapes 4096x4096,12288x4096 --bts 512,1024 \
  --arms adamw-bf16 --plots 4 > $OUT/timeline.log 2>&1
echo "timeline rc $?"; tail -n 6 $OUT/timeline.log
rm -f $OUT/timeline/traces.pt $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
