#!/usr/bin/env bash
# Session 48, device call 9: on an H200 session 47's h200_call1.sh with TWINS_ONLY=1; elsewhere the card's identity,
# then Nsight Compute on the LM head's AdamW int8 step at BT 16384, its five-stage cooperative-tall row and the
# same with six stages (call 8: six take ~29% more cycles at a higher clock): L2 hit rate and DRAM bytes.
#   bash results/2026-12-06/session48/call9.sh     (device, repository root; writes $OUT)
#   REPLACES=num_stages=6 bash ...   (the six-stage profile alone: tries 2 and 3, before each profile's tar was kept)
#   call 10 runs it whole again (the five-stage report of try 1 was overwritten by the six-stage one's tar);
#   next_lm16k.sh runs it with its own REPLACES (fields without spaces, one profile each)
export TWINS_ONLY=1
. results/2026-12-06/session47/h200_or_card.sh
for replace in ${REPLACES:-"" num_stages=6}; do
  REPLACE=$replace CELLS=151936x4096:16384:adamw-int8 GLUON_FLAGS=1 ARMS=step NCU_TIMEOUT=130 \
    SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis" bash scripts/device/ncu_kernel.sh
  mv "$OUT/ncu.tgz" "$OUT/ncu_$(echo "${replace:-winner}" | tr '=,' '__').tgz"  # ncu_kernel.sh tars $OUT/ncu each time
done
