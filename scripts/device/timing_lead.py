"""How much of a graph-timed call is the host submitting the replay (``bench.common.time_graph``).

    python3 scripts/device/timing_lead.py     # device; -> $OUT/timing_lead.csv, one line per row printed

Before session 17 each replay started on an idle GPU: the start event is recorded at once and
the calls wait for the host's ``graph.replay()``, so the submission latency counted as their
time (a cuBLAS wgrad of 1024 x 4096 read 18.2 us at BT 512 and 20.2 us at BT 1024, twice the
FLOPs). Each row is timed both ways, alternating, three rounds (medians of 30 replays each):
``idle`` (``lead_cycles=0``) and ``lead`` (a GPU spin queued ahead of the start event, the
default). ``empty`` is a graph of one 1-element add: its ``idle`` time is the offset itself.
"""

from __future__ import annotations

import csv
import os
import statistics

import torch

import forge_mcore as fm
from forge_mcore.bench.common import LEAD_CYCLES, time_graph
from forge_mcore.bench.kernel import ForgeArm, cell_operands


def cublas_call(shape: str, bt: int):
    dy, x, w0 = cell_operands(shape, bt)
    grad = torch.empty_like(w0)
    return lambda: torch.mm(dy.t(), x, out=grad)


def main() -> None:
    one = torch.zeros(1, device="cuda")
    rows = {("empty", "-", 0): lambda: one.add_(1)}
    for shape, bt in [("1024x4096", 512), ("1024x4096", 1024), ("4096x4096", 512), ("4096x4096", 4096)]:
        rows[("cublas wgrad", shape, bt)] = cublas_call(shape, bt)
    for shape in ("1024x4096", "4096x4096"):
        forge = ForgeArm.build(shape, 512, "adamw-bf16")
        rows[("forge adamw-bf16", shape, 512)] = forge.steps(fm.StepTelemetry.zeros("cuda"))
    out = os.environ.get("OUT", "/tmp/out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "timing_lead.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["what", "shape", "bt", "calls", "idle_us", "lead_us", "idle_minus_lead_us"])
        for (what, shape, bt), fn in rows.items():
            idle, lead = [], []
            for _ in range(3):
                idle.append(1e3 * time_graph(fn, reps=30, lead_cycles=0))
                lead.append(1e3 * time_graph(fn, reps=30, lead_cycles=LEAD_CYCLES))
            i, ld = statistics.median(idle), statistics.median(lead)
            n = len(fn) if isinstance(fn, list) else 1
            writer.writerow([what, shape, bt, n, f"{i:.2f}", f"{ld:.2f}", f"{i - ld:.2f}"])
            print(f"{what:18s} {shape:10s} {bt:5d} calls {n}  idle {i:7.2f} us  lead {ld:7.2f} us  "
                  f"difference {i - ld:6.2f} us", flush=True)


if __name__ == "__main__":
    main()
