#!/usr/bin/env bash
# Session 13, device call 1: parity tests inside the patched trees, bits vs HEAD, phase timelines.
# Trees built by: bash scripts/ab_trees.sh results/2026-12-01/session12/next/*.patch (+ tests/, pyproject.toml copied in)
set -u
OUT=${OUT:-/tmp/out}; R=results/2026-12-01/session13
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
K='gluon or main_loop or poisoned'
for t in cp_async_tile_producer int8_conversions int8_row_scales_before_main_loop; do
  (cd ab_$t && timeout 330 python3 -m pytest -q -m gpu tests/functional/test_kernel_gpu.py -p no:cacheprovider \
     -k "($K) and not 151936" -n 5 > $OUT/tests_$t.log 2>&1; echo "rc $?" >> $OUT/tests_$t.log) &
done
wait
for t in base cp_async_tile_producer int8_conversions int8_row_scales_before_main_loop; do
  (cd ab_$t && python3 ../results/2026-12-01/session12/call10/bits.py /tmp/bits_$t.pt > /tmp/bits_$t.log 2>&1)
done
python3 - > $OUT/bits.txt 2>&1 <<'PY'
import torch
base = torch.load("/tmp/bits_base.pt")
for t in ("cp_async_tile_producer", "int8_conversions", "int8_row_scales_before_main_loop"):
    try:
        other = torch.load(f"/tmp/bits_{t}.pt")
    except Exception as e:
        print(t, "FAILED", e); continue
    for k, ts in base.items():
        print(t, k, "equal" if all(torch.equal(a, b) for a, b in zip(ts, other[k])) else
              "DIFF " + " ".join(f"{(a.float()-b.float()).abs().max().item():.3g}" for a, b in zip(ts, other[k])))
PY
for t in base cp_async_tile_producer diag_l2_reads_without_tma_loads; do
  (cd ab_$t && timeout 120 python3 -m forge_mcore.bench.timeline --out $OUT/tl_$t --shapes 4096x4096 --bts 512,1024 \
     --arms adamw-bf16,adamw-int8 --plots 1 > $OUT/tl_$t.log 2>&1; echo "rc $?" >> $OUT/tl_$t.log)
  rm -f $OUT/tl_$t/traces.pt
done
cd $OUT && tar czf extras.tgz tl_* tests_*.log && rm -rf tl_*
