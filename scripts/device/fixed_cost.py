"""What a small cell pays before any work: the fused step, its main loop alone and cuBLAS's wgrad at
one shape over several BT, all on the BT-``BASE_BT`` winner's config (only K changes), interleaved
in one ``time_graphs`` call, with a trivial one-element kernel as the graph's own per-launch cost
and a plain copy of the step's weight and state bytes (read once, written once: what the epilogue
alone moves) as the rate those bytes can stream at.
A least-squares line per arm, ms = intercept + slope x BT, separates the per-call fixed cost
(launch, prologue, first slab fill, last tile's drain) from the cost that grows with BT.

    python3 scripts/device/fixed_cost.py   # device; env SHAPE (MxN), BTS, BASE_BT, ARM, REPS
    -> one line per BT and arm, the fitted lines, and $OUT/fixed_cost.csv
"""

from __future__ import annotations

import os

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import time_graphs, write_csv
from forge_mcore.bench.kernel import ForgeArm

SHAPE = os.environ.get("SHAPE", "1024x4096")
BTS = [int(b) for b in os.environ.get("BTS", "64,128,256,512,1024").split(",")]
BASE_BT = int(os.environ.get("BASE_BT", 512))
ARM = os.environ.get("ARM", "adamw-bf16")
REPS = int(os.environ.get("REPS", 30))


def fit(bts: list[int], ms: list[float]) -> tuple[float, float]:
    """Least-squares intercept and slope of ms against BT."""
    mean_b, mean_t = sum(bts) / len(bts), sum(ms) / len(ms)
    slope = sum((b - mean_b) * (t - mean_t) for b, t in zip(bts, ms)) / sum((b - mean_b) ** 2 for b in bts)
    return mean_t - slope * mean_b, slope


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    out = os.environ.get("OUT", ".")
    base = ForgeArm.build(SHAPE, BASE_BT, ARM)
    tel = fm.StepTelemetry.zeros("cuda")
    base.steps(tel)[0]()  # the committed winner, picked outside the graph
    config = ops.tuned_config(base.dy, base.weights[0], base.states[0])
    print(f"{SHAPE} {ARM}: config of BT {BASE_BT}: {config}", flush=True)
    sink = torch.zeros(1, device="cuda")
    one = torch.zeros(1, device="cuda")
    arms = {"empty": [lambda: one.add_(1) for _ in base.weights]}  # per-launch cost of a graph of len(weights) kernels
    sets = len(base.weights)
    tile_bytes = base.tile_bytes
    sources = [torch.empty(tile_bytes, device="cuda", dtype=torch.uint8) for _ in range(sets)]
    targets = [torch.empty_like(t) for t in sources]
    arms["copy"] = [lambda s=s, t=t: t.copy_(s) for s, t in zip(sources, targets)]
    for bt in BTS:
        dy = torch.randn(bt, base.w0.shape[0], device="cuda", dtype=torch.bfloat16)
        x = torch.randn(bt, base.w0.shape[1], device="cuda", dtype=torch.bfloat16)
        grads = [torch.empty_like(base.w0) for _ in range(sets)]
        arms[f"step:{bt}"] = [lambda w=w, s=s, h=h, dy=dy, x=x: fm.fused_wgrad_step(
            dy, x, w, s, h, telemetry=tel, config=config) for w, s, h in zip(base.weights, base.states, base.hypers)]
        arms[f"mainloop:{bt}"] = [lambda w=w, s=s, dy=dy, x=x: ops.wgrad_mainloop(
            dy, x, w, sink=sink, config=config, state=s) for w, s in zip(base.weights, base.states)]
        arms[f"cublas:{bt}"] = [lambda g=g, dy=dy, x=x: torch.mm(dy.t(), x, out=g) for g in grads]
    ms = time_graphs(arms, reps=REPS)
    rows = [dict(shape=SHAPE, arm=ARM, what=name.split(":")[0], bt=int(name.split(":")[1]) if ":" in name else 0,
                 us=1000 * t, config=str(config)) for name, t in ms.items()]
    write_csv(os.path.join(out, "fixed_cost.csv"), rows)
    print(f"empty kernel: {1000 * ms['empty']:.2f} us per launch; copy of the weight and state bytes "
          f"({tile_bytes / 2**20:.1f} MiB each way): {1000 * ms['copy']:.2f} us")
    for what in ("cublas", "mainloop", "step"):
        us = [1000 * ms[f"{what}:{bt}"] for bt in BTS]
        intercept, slope = fit(BTS, us)
        print(f"{what:>8}: " + " ".join(f"BT{bt} {t:.2f}" for bt, t in zip(BTS, us))
              + f"  | fit {intercept:.2f} us + {1000 * slope:.2f} ns x BT")


if __name__ == "__main__":
    main()
