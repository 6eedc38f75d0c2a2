#!/usr/bin/env bash
# Next session's first device call (written in session 16, not run). Before it, locally:
#   rm -rf ab_base ab_rules && mkdir ab_base && git archive HEAD forge_mcore | tar -x -C ab_base
#   mkdir ab_rules && git archive HEAD forge_mcore tests pyproject.toml | tar -x -C ab_rules
#   (cd ab_rules && patch -p1 -s < ../results/2026-12-02/session16/next/rule_instructions.patch)
# 1. Lion swept on ping-pong and tall tiles at BT 512/1024 on main (never done on main's code);
# 2. rule_instructions.patch: Gluon GPU tests in ab_rules, bits vs main, A/B at BT 512/1024;
# 3. the phase timeline of AdamW bf16 at BT 512/1024 (tall at BT 1024).
set -u
OUT=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1 FORGE_AUTOTUNE=0 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt
timeout 150 python3 -m forge_mcore.bench.kernel --out $OUT/sw_lion \
  --shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms lion-bf16 \
  --sweep --sweep-configs all --sweep-kernels gluon_ws,gluon_tall --reps 30 > $OUT/sw_lion.log 2>&1
echo "lion sweep rc $?"
TREE=ab_rules BASE=ab_base OUT=$OUT bash scripts/device/check_tree.sh
TREES="rules:ab_rules" RATIO=adamw-int8/adamw-bf16 RUN_TIMEOUT=90 \
  ARGS="--shapes 4096x4096,12288x4096,4096x12288,1024x4096 --bts 512,1024 --arms adamw-bf16,lion-bf16,adamw-int8 --reps 30" \
  bash scripts/device/code_ab.sh > $OUT/ab.txt 2>&1
grep -v "/" $OUT/ab.txt
# 3. where a tall AdamW bf16 step's time goes at BT 1024 (its % of floor, 47-58%, is well under the
#    L2 cap's 70-76%): the phase timeline on main, beside the BT 512 ping-pong cell for reference
timeout 100 python3 -m forge_mcore.bench.timeline --out $OUT/timeline --shapes 4096x4096,12288x4096 --bts 512,1024 \
  --arms adamw-bf16 --plots 4 > $OUT/timeline.log 2>&1
echo "timeline rc $?"; tail -n 6 $OUT/timeline.log
rm -f $OUT/timeline/traces.pt
rm -f $OUT/*/kernel_bench.png
cd $OUT && tar czf /tmp/call.tgz . && rm -rf $OUT/* && mv /tmp/call.tgz $OUT/
