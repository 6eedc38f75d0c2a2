"""How much of a graph-timed call is the graph's own entry and exit: each arm timed as graphs of L
back-to-back calls (cycling the cell's rotation sets, so no set is L2-resident when it comes
round again), for several L, interleaved in one ``time_graphs`` call. ms per graph = overhead +
L x steady, fitted per arm: ``overhead`` is what one replay pays once (event to first kernel,
last kernel to event), ``steady`` the call's cost in a stream of them. The kernel bench times the
FORGE arm in graphs of one call per rotation set (2-3 at the small cells), its main loop and
cuBLAS in graphs of one call. ``step warm`` calls the step on one set only, so its weight and
states stay L2-resident (when they fit): the step without its HBM traffic, its shared-memory and
L2 traffic and its rule kept.

    python3 scripts/device/graph_length.py   # device; env CELLS ("MxN:BT:arm;..."), LENGTHS, REPS
    -> a line per cell and arm, and $OUT/graph_length.csv
"""

from __future__ import annotations

import os

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import time_graphs, write_csv
from forge_mcore.bench.kernel import ForgeArm

CELLS = os.environ.get("CELLS", "1024x4096:512:adamw-bf16;1024x4096:1024:sgdm-bf16;4096x4096:1024:adamw-bf16")
LENGTHS = [int(n) for n in os.environ.get("LENGTHS", "1,3,6,12,24").split(",")]
REPS = int(os.environ.get("REPS", 30))


def fit(lengths: list[int], ms: list[float]) -> tuple[float, float]:
    """Least-squares intercept (per graph) and slope (per call) of a graph's ms against its length."""
    mean_l, mean_t = sum(lengths) / len(lengths), sum(ms) / len(ms)
    slope = sum((n - mean_l) * (t - mean_t) for n, t in zip(lengths, ms)) / sum((n - mean_l) ** 2 for n in lengths)
    return mean_t - slope * mean_l, slope


def cell_arms(shape: str, bt: int, arm: str) -> dict[str, list]:
    """One call of each arm per rotation set: the fused step (and on one set only: ``step warm``),
    its main loop alone, cuBLAS's wgrad, and a one-element kernel."""
    forge = ForgeArm.build(shape, bt, arm)
    tel = fm.StepTelemetry.zeros("cuda")
    steps = forge.steps(tel)
    steps[0]()  # the committed winner, picked outside any graph
    config = ops.tuned_config(forge.dy, forge.weights[0], forge.states[0])
    sink, one = torch.zeros(1, device="cuda"), torch.zeros(1, device="cuda")
    grads = [torch.empty_like(forge.w0) for _ in forge.weights]
    return {
        "step": steps,
        "step warm": steps[:1],
        "mainloop": [lambda w=w, s=s: ops.wgrad_mainloop(forge.dy, forge.x, w, sink=sink, config=config, state=s)
                     for w, s in zip(forge.weights, forge.states)],
        "cublas": [lambda g=g: torch.mm(forge.dy.t(), forge.x, out=g) for g in grads],
        "empty": [lambda: one.add_(1) for _ in grads],
    }


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    out = os.environ.get("OUT", ".")
    rows = []
    for cell in CELLS.split(";"):
        shape, bt, arm = cell.split(":")
        arms = cell_arms(shape, int(bt), arm)
        graphs = {f"{name}:{n}": [calls[i % len(calls)] for i in range(n)] for name, calls in arms.items()
                  for n in LENGTHS}
        ms = time_graphs(graphs, reps=REPS)  # ms per call of each graph
        for name in arms:
            per_graph = [1000 * ms[f"{name}:{n}"] * n for n in LENGTHS]
            overhead, steady = fit(LENGTHS, per_graph)
            rows += [dict(cell=cell, arm=name, calls=n, us_per_call=t / n, sets=len(arms[name]))
                     for n, t in zip(LENGTHS, per_graph)]
            print(f"{cell} {name:>8}: " + " ".join(f"L{n} {t / n:.2f}" for n, t in zip(LENGTHS, per_graph))
                  + f"  | fit {overhead:.2f} us per graph + {steady:.2f} us per call", flush=True)
    write_csv(os.path.join(out, "graph_length.csv"), rows)


if __name__ == "__main__":
    main()
