#!/usr/bin/env bash
# Prepared in session 48, not run (its device time was spent): the LM head at BT 16384 on an H100, where the slabs
# miss L2 (session 48 calls 9-10: five-stage cooperative tall 66-69% hits, ~48 GB from DRAM per step against the
# step's ~10 GB of unique bytes; six stages 49%, ~94 GB). Does the tile order move the misses, and does the H200's
# tall int8 row (its rule hidden behind the other consumer's main loop, where cooperative tall exposes it: int8 ~5%
# more cycles than bf16) lose on the H100 only through them? On an H200 session 47's h200_call1.sh runs instead.
# Prediction (`python3 results/2026-12-06/session48/raster_model.py`): in lockstep the slabs would take 24.6 GB from
# DRAM at group_m 8 (the rows' order), 29.0 at 4 and 29.2 at 16; the step read ~48 GB with ~5 GB of weight and
# states, so ~1.75x lockstep's slab bytes. If the excess is the SMs' spread along K, group_m 4 and 16 read about
# as much more as the model says and run no faster; only an order that keeps the SMs together would.
#   bash results/2026-12-06/session48/next_lm16k.sh     (device, repository root; writes $OUT)
# Session 49 ran its first half (results/2026-12-06/session49/call1.sh, its device time cut by failed starts).
. results/2026-12-06/session47/h200_or_card.sh
TALL="kernel=gluon_tall,block_m=128,block_k=64,epilogue_stages=1"  # the H200's int8 row there
ab order 151936x4096:16384 adamw-int8 "group_m=4;group_m=16;$TALL;$TALL,num_stages=4"
REPLACES="group_m=16 $TALL" bash results/2026-12-06/session48/call9.sh  # Nsight, one profile each
