"""How far apart the SMs of a traced Gluon step end (call 2's timeline): per cell, each program's span
(its first turn stamp to its last release, in its SM's own clock; session 22's global-timer stamps had the
SMs start within 0.2 us of each other, so spans compare as end times), by the number of units it ran.

    python results/2026-12-05/session36/spread.py results/2026-12-05/session36/call2/timeline/traces.pt
"""

import sys

import torch

TURN, RELEASED, STORES_ISSUED = 0, 5, 4

for cell in torch.load(sys.argv[1]):
    trace = cell["trace"].to(torch.int64)
    ran = trace[..., TURN] > 0
    released = torch.where(trace[..., RELEASED] > 0, trace[..., RELEASED], trace[..., STORES_ISSUED])
    spans, units = [], []
    for p in range(trace.shape[0]):
        if ran[p].any():
            spans.append(float(released[p][ran[p]].max() - trace[p][ran[p]][:, TURN].min()))
            units.append(int(ran[p].sum()))
    spans_t, units_t = torch.tensor(spans), torch.tensor(units)
    busiest = spans_t[units_t == units_t.max()]
    mean = float(spans_t.sum() / units_t.sum() * units_t.float().mean())  # perfectly balanced span
    longest = float(spans_t.max())
    print(f"{cell['shape']} BT {cell['bt']} {cell['arm']}: {len(spans)} programs, units "
          f"{units_t.min()}-{units_t.max()}; span kcycles: busiest median {busiest.median() / 1e3:.1f}, "
          f"p10 {busiest.quantile(0.1) / 1e3:.1f}, p90 {busiest.quantile(0.9) / 1e3:.1f}, max {longest / 1e3:.1f}; "
          f"balanced {mean / 1e3:.1f}: the longest is {(longest - mean) / longest:.1%} above it; "
          f"step {cell.get('step_ms', float('nan')) * 1e3:.2f} us")
