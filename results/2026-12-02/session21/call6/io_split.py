"""Session 21 call 6 (diagnostics, with io_split.patch applied): the committed winner's step with its
tile fills, its tile stores, or both left out (FORGE_DIAG_IO 1, 2, 3; the results are wrong there and
only the time counts), beside the whole step and its main loop alone, interleaved
(bench.common.time_graphs). Each arm sets FORGE_DIAG_IO before its launch, so each graph captures
its own kernel.

    CELLS=4096x4096:512 ARMS=adamw-bf16 OUT=$OUT python3 results/2026-12-02/session21/call6/io_split.py
"""

import csv
import os
from dataclasses import asdict

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import time_graphs
from forge_mcore.bench.kernel import ForgeArm

MODES = {"step": "0", "no_fill": "1", "no_store": "2", "neither": "3"}


def run_cell(cell: str, arm: str) -> dict:
    shape, bt = cell.split(":")
    forge = ForgeArm.build(shape, int(bt), arm)
    tel = fm.StepTelemetry.zeros("cuda")
    os.environ["FORGE_DIAG_IO"] = "0"
    forge.steps(tel)[0]()
    config = ops.tuned_config(forge.dy, forge.weights[0], forge.states[0])

    def one(mode, w, s, h):
        os.environ["FORGE_DIAG_IO"] = mode
        fm.fused_wgrad_step(forge.dy, forge.x, w, s, h, telemetry=tel, config=config)

    sets = list(zip(forge.weights, forge.states, forge.hypers))
    arms = {name: [lambda m=mode, w=w, s=s, h=h: one(m, w, s, h) for w, s, h in sets] for name, mode in MODES.items()}
    sink = torch.zeros(1, device="cuda")
    arms["mainloop"] = [lambda w=w, s=s: ops.wgrad_mainloop(forge.dy, forge.x, w, sink=sink, config=config, state=s)
                        for w, s, _ in sets]
    ms = time_graphs(arms, reps=30)
    return dict(cell=cell, arm=arm, config=str(asdict(config)), **{f"{k}_ms": v for k, v in ms.items()})


def main() -> None:
    out = os.environ.get("OUT", ".")
    rows = []
    for cell in os.environ["CELLS"].split(","):
        for arm in os.environ["ARMS"].split(","):
            rows.append(run_cell(cell, arm))
            print(f"{cell:>18} {arm:<10} " + " ".join(f"{k} {v}" for k, v in rows[-1].items() if k.endswith("_ms")),
                  flush=True)
            with open(os.path.join(out, "io_split.csv"), "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
