#!/usr/bin/env bash
# Session 51, device call 2: where the LM head's int8 step at BT 16384 loses to bf16 (call 1: one config, the
# int8 step 2.6% longer under Nsight at a 1.3% lower clock, 25% more DRAM bytes, L2 hit rate 61% against 72%,
# its rule 2% of step - main loop). First rule_cost.py with both arms interleaved in one timing (call 1 timed
# them one after the other: their main loops, one config, 2.2% apart). Then Nsight metrics (DRAM bytes read
# and written, L2 sectors read/written/missed, clock, cycles) of each arm's step, NaN step (rule skipped, same
# tiles moved) and main loop alone: whether the extra DRAM reads come with int8's tile traffic or its rule.
#   bash results/2026-12-06/session51/call2.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
CELLS=151936x4096:16384 ARMS=adamw-int8,adamw-bf16 REPS=10 timeout 150 python3 scripts/device/rule_cost.py
echo "== rule_cost rc $?"
wanted="dram__bytes_read dram__bytes_write lts__t_sector_hit_rate lts__t_sectors_op_read lts__t_sectors_op_write
  lts__t_sectors_op_read_lookup_miss lts__t_sectors_op_write_lookup_miss lts__t_sectors_srcunit_ltcfabric
  gpu__time_duration sm__cycles_elapsed"
ncu --query-metrics > "$OUT/ncu_metrics.txt" 2>&1
metrics=$(for m in $wanted; do
  grep -q "^$m " "$OUT/ncu_metrics.txt" && case $m in
    lts__t_sector_hit_rate) echo "$m.pct" ;;
    sm__cycles_elapsed) echo "$m.max,$m.avg.per_second" ;;
    *) echo "$m.sum" ;;
  esac; done | paste -sd,)
[ -n "$metrics" ] || metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
echo "== metrics: $metrics"
CELLS="151936x4096:16384:adamw-int8 151936x4096:16384:adamw-bf16" GLUON_FLAGS=1 ARMS="step nan mainloop" \
  SECTIONS="--metrics $metrics" NCU_TIMEOUT=150 bash scripts/device/ncu_kernel.sh 2>&1 | grep -v "^ *$"
mkdir -p /tmp/ncu2 && tar -C /tmp/ncu2 -xzf "$OUT/ncu.tgz"
for f in /tmp/ncu2/ncu/*.txt; do echo "== $(basename "$f")"; grep -E "__|Duration" "$f"; done | tee "$OUT/metrics_by_arm.txt"
