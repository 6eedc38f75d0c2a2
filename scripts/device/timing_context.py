"""Does the arm replayed before a FORGE step change its time? (session 17: with the kernel bench's
arms interleaved, ``bench.common.time_graphs``, AdamW bf16 tall cells at BT 1024 read 3-12% slower
than with each arm's replays back to back, the other arms' cells within 3%).

    python3 scripts/device/timing_context.py     # device; -> $OUT/timing_context.csv, a line per row printed

Per cell, the FORGE arm's graph (``bench.kernel.ForgeArm``: the benchmark's rotating sets) is
timed right after one replay of a context graph, in the same queue behind the lead spin, so
only the step is between the events: ``itself`` (the step again: the sequential method's L2),
``mainloop`` (the step's kernel with its epilogue compiled out: reads dY and X), ``cublas``
(``dY^T X`` into a bf16 gradient), ``flush`` (zeroing 256 MiB: nothing of the step's in L2).
The contexts take turns rep by rep; medians of 30.
"""

from __future__ import annotations

import csv
import os
import statistics

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import LEAD_CYCLES, capture_graph
from forge_mcore.bench.kernel import ForgeArm

CELLS = [("4096x4096", 1024, "adamw-bf16"), ("4096x4096", 512, "adamw-bf16"), ("4096x4096", 1024, "sgdm-bf16"),
         ("1024x4096", 1024, "adamw-bf16")]


def contexts(shape: str, dy: torch.Tensor, x: torch.Tensor, config, weight, state) -> dict:
    M, N = map(int, shape.split("x"))
    grad = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    sink = torch.zeros(1, device="cuda")
    flush = torch.empty(256 * 2**20, device="cuda", dtype=torch.uint8)
    return {
        "mainloop": lambda: ops.wgrad_mainloop(dy, x, weight, sink=sink, config=config, state=state),
        "cublas": lambda: torch.mm(dy.t(), x, out=grad),
        "flush": lambda: flush.zero_(),
    }


def main() -> None:
    out = os.environ.get("OUT", "/tmp/out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "timing_context.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["shape", "bt", "arm", "context", "forge_us"])
        for shape, bt, arm in CELLS:
            forge = ForgeArm.build(shape, bt, arm)
            calls, dy, x, weight, state = (forge.steps(fm.StepTelemetry.zeros("cuda")), forge.dy, forge.x,
                                           forge.weights[0], forge.states[0])
            calls[0]()  # its config (the committed winner) chosen outside any graph
            config = ops.tuned_config(dy, weight, state)
            step, n = capture_graph(calls)
            graphs = {"itself": (step, n)} | {name: capture_graph(fn) for name, fn in
                                               contexts(shape, dy, x, config, weight, state).items()}
            times: dict[str, list[float]] = {name: [] for name in graphs}
            for rep in range(30):
                for name in (list(graphs) if rep % 2 == 0 else list(graphs)[::-1]):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    torch.cuda._sleep(LEAD_CYCLES)
                    graphs[name][0].replay()  # the context, then the step alone between the events
                    start.record()
                    step.replay()
                    end.record()
                    end.synchronize()
                    times[name].append(1e3 * start.elapsed_time(end) / n)
            for name, t in times.items():
                writer.writerow([shape, bt, arm, name, f"{statistics.median(t):.2f}"])
                print(f"{shape:10s} {bt:5d} {arm:11s} after {name:8s} {statistics.median(t):8.2f} us", flush=True)
            del graphs, step


if __name__ == "__main__":
    main()
