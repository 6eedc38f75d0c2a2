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
from forge_mcore.bench.common import LEAD_CYCLES, rotation_count, time_graph
from forge_mcore.bench.kernel import ARMS


def forge_calls(shape: str, bt: int, arm: str) -> tuple[list, torch.Tensor, torch.Tensor, torch.Tensor, object]:
    """The kernel benchmark's FORGE arm: one step per rotating weight/state set; its dY and X, and
    the first set's weight and state."""
    M, N = map(int, shape.split("x"))
    rule, state_dtype, hp, _ = ARMS[arm]
    gen = torch.Generator(device="cuda").manual_seed(0)
    dy = torch.randn(bt, M, device="cuda", dtype=torch.bfloat16, generator=gen)
    x = torch.randn(bt, N, device="cuda", dtype=torch.bfloat16, generator=gen)
    w0 = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
    probe = fm.ForgeParamState.create(w0, rule, hp, state_dtype, "bf16")
    sets = rotation_count(2 * w0.nbytes + 2 * probe.nbytes + dy.nbytes + x.nbytes)
    weights = [w0.clone() for _ in range(sets)]
    states = [fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16") for w in weights]
    hypers = [s.prepare_step(s.rule.make_group(**hp)) for s in states]
    tel = fm.StepTelemetry.zeros("cuda")
    return [lambda w=w, s=s, h=h: fm.fused_wgrad_step(dy, x, w, s, h, telemetry=tel)
            for w, s, h in zip(weights, states, hypers)], dy, x, weights[0], states[0]


def cublas_call(shape: str, bt: int):
    M, N = map(int, shape.split("x"))
    dy = torch.randn(bt, M, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(bt, N, device="cuda", dtype=torch.bfloat16)
    grad = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.mm(dy.t(), x, out=grad)


def main() -> None:
    one = torch.zeros(1, device="cuda")
    rows = {("empty", "-", 0): lambda: one.add_(1)}
    for shape, bt in [("1024x4096", 512), ("1024x4096", 1024), ("4096x4096", 512), ("4096x4096", 4096)]:
        rows[("cublas wgrad", shape, bt)] = cublas_call(shape, bt)
    for shape in ("1024x4096", "4096x4096"):
        rows[("forge adamw-bf16", shape, 512)] = forge_calls(shape, 512, "adamw-bf16")[0]
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
