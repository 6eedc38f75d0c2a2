"""For the session after 22 (not run; needs next/globaltimer.patch applied): where a small cell's step
time goes outside its SMs' busy spans. One CUDA graph: a one-thread marker kernel writing %globaltimer,
the traced step (committed winner), a second marker. Every stamp is the global nanosecond timer, so SMs
line up against each other and against the markers:
  launch -> entry     first marker to the earliest consumer entry (graph launch gap, CTA launch)
  entry -> first turn the earliest entry to the earliest first unit (barrier init, hyper load)
  body                the earliest first unit to the latest "stores issued" (the last rule written)
  tail                the latest "stores issued" to the second marker (the last stores, kernel end,
                      one launch gap)
and the spread of per-SM entries and last stamps: each SM's last stamp after the first unit at its
10th, 50th and 90th percentile and maximum, the median among the SMs with the most units, and how
many units the SMs ran.
    python3 tail_probe.py OUT_DIR CELL[,CELL...]     (CELL = MxN:BT:arm)  -> OUT_DIR/tail_probe.csv
"""

from __future__ import annotations

import csv
import os
import sys

import torch
import triton
import triton.language as tl

from forge_mcore.bench.common import capture_graph, time_graph
from forge_mcore.bench.timeline import ENTRY, STORES_ISSUED, TURN, cell_step
from forge_mcore.kernels import gluon_wgrad


@triton.jit
def _marker(ptr):
    now = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(ptr, now)


def probe(shape: str, bt: int, arm: str) -> dict:
    dy, x, w, state, hyper, tel, cfg = cell_step(shape, bt, arm)
    M, N = w.shape
    trace = gluon_wgrad.trace_buffer(cfg, M, N, w.device)
    marks = torch.zeros(2, dtype=torch.int64, device="cuda")

    def step(traced: bool) -> None:
        gluon_wgrad.launch(cfg, dy, x, w, state, state.slot_tensors, hyper, tel.sumsq, tel.nonfinite_tiles, None,
                           None, trace=trace if traced else None)

    def bracketed() -> None:
        _marker[(1,)](marks[0:])
        step(True)
        _marker[(1,)](marks[1:])

    graph, _ = capture_graph(bracketed)
    rows = []
    for _ in range(5):  # five replays; the rows report the median of each quantity
        trace.zero_()
        graph.replay()
        torch.cuda.synchronize()
        t = trace.cpu()
        ran = t[..., TURN] > 0
        entry = t[:, :, 0, ENTRY]
        first_turn = t[..., TURN][ran].min()
        last_issued = t[..., STORES_ISSUED][ran].max()
        per_sm_last = torch.where(ran, t[..., STORES_ISSUED], torch.zeros_like(t[..., STORES_ISSUED])).amax(dim=(1, 2))
        pre, post = (int(v) for v in marks.cpu())
        ends = (per_sm_last[per_sm_last > 0] - first_turn).double()  # each SM's last stamp after the first unit
        units = ran.sum(dim=(1, 2))
        busiest = units == units.max()
        rows.append(dict(launch_to_entry=entry.min() - pre, entry_to_first_turn=first_turn - entry.min(),
                         body=last_issued - first_turn, tail=post - last_issued, total=post - pre,
                         entry_spread=entry.max() - entry.min(),
                         last_spread=per_sm_last.max() - per_sm_last[per_sm_last > 0].min(),
                         end_p10=ends.quantile(0.1), end_p50=ends.quantile(0.5), end_p90=ends.quantile(0.9),
                         end_max=ends.max(),
                         busiest_end_p50=(per_sm_last[busiest] - first_turn).double().median(),
                         busiest_sms=busiest.sum(), units_max=units.max(), units_min=units.min()))
    counts = ("busiest_sms", "units_max", "units_min")
    median = {k: float(torch.tensor([float(r[k]) for r in rows]).median()) for k in rows[0]}
    return dict(cell=f"{shape}:{bt}", arm=arm, kernel=cfg.kernel, step_us=1e3 * time_graph(lambda: step(False)),
                **{f"{k}_us": v / 1e3 for k, v in median.items() if k not in counts},
                **{k: int(median[k]) for k in counts})


def main() -> None:
    out, cells = sys.argv[1], sys.argv[2].split(",")
    rows = []
    for cell in cells:
        shape, bt, arm = cell.split(":")
        r = probe(shape, int(bt), arm)
        rows.append(r)
        print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tail_probe.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
