"""What the rule itself costs inside the fused step: the same step with a finite gradient, with a
NaN one (the guard skips every tile's rule; its weight and state tiles are still loaded and stored
back unchanged, so the step moves the same bytes), and its main loop alone, interleaved.

    python3 scripts/device/rule_cost.py      # device; env CELLS (MxN:BT,...), ARMS, REPS
    -> one line per cell and arm, and $OUT/rule_cost.csv

step - nan is the rule's own time (its instructions and its shared-memory reads and writes of the
tile buffers) that the schedule does not hide; nan - mainloop is what moving the tile bytes adds
to the main loop. The config is each arm's committed winner (FORGE_AUTOTUNE=0). All arms of a cell
are timed in one ``time_graphs`` call, their replays interleaved: a drift between arms (session 51:
two main loops of one config 2.2% apart when the arms were timed one after the other) falls on all.
"""

from __future__ import annotations

import csv
import os
from dataclasses import asdict

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import time_graphs
from forge_mcore.bench.kernel import ForgeArm

CELLS = os.environ.get("CELLS", "4096x4096:512,4096x4096:1024,1024x4096:512").split(",")
ARM_NAMES = os.environ.get("ARMS", "adamw-bf16").split(",")
REPS = int(os.environ.get("REPS", 30))


def cell_graphs(shape: str, bt: int, arm: str) -> tuple[dict, dict]:
    """({"<arm> step"|"<arm> nan"|"<arm> mainloop": calls}, the arm's row without times)."""
    forge = ForgeArm.build(shape, bt, arm)
    tel = fm.StepTelemetry.zeros("cuda")
    forge.steps(tel)[0]()  # picks the config outside the graph
    config = ops.tuned_config(forge.dy, forge.weights[0], forge.states[0])
    finite = forge.steps(tel, config)
    nan_dy = torch.full_like(forge.dy, float("nan"))
    poisoned = [lambda w=w, s=s, h=h: fm.fused_wgrad_step(nan_dy, forge.x, w, s, h, telemetry=tel, config=config)
                for w, s, h in zip(forge.weights, forge.states, forge.hypers)]
    sink = torch.zeros(1, device="cuda")
    mainloop = [lambda w=w, s=s: ops.wgrad_mainloop(forge.dy, forge.x, w, sink=sink, config=config, state=s)
                for w, s in zip(forge.weights, forge.states)]
    # a NaN step must skip every tile (its weight bit for bit, each tile counted non-finite)
    before, counted = forge.weights[0].clone(), int(tel.nonfinite_tiles.item())
    poisoned[0]()
    skipped = torch.equal(before, forge.weights[0]) and int(tel.nonfinite_tiles.item()) > counted
    graphs = {f"{arm} step": finite, f"{arm} nan": poisoned, f"{arm} mainloop": mainloop}
    return graphs, dict(cell=f"{shape}:{bt}", arm=arm, config=str(asdict(config)), nan_step_skipped_every_tile=skipped)


def run_cell(shape: str, bt: int, arms: list[str]) -> list[dict]:
    """One row per arm, every arm's step, NaN step and main loop interleaved in one timing."""
    graphs, rows = {}, []
    for arm in arms:
        arm_graphs, row = cell_graphs(shape, bt, arm)
        graphs.update(arm_graphs)
        rows.append(row)
    ms = time_graphs(graphs, reps=REPS)
    for row in rows:
        for kind in ("step", "nan", "mainloop"):
            row[f"{kind}_ms"] = ms[f"{row['arm']} {kind}"]
        spread = row["step_ms"] - row["mainloop_ms"]
        row["rule_share"] = (row["step_ms"] - row["nan_ms"]) / spread if spread > 0 else float("nan")
    return rows


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    out = os.environ.get("OUT", ".")
    rows = []
    for cell in CELLS:
        shape, bt = cell.split(":")
        rows += run_cell(shape, int(bt), ARM_NAMES)
        for r in rows[-len(ARM_NAMES):]:
            print(f"{r['cell']:>18} {r['arm']:<10} step {r['step_ms']:.4f} nan {r['nan_ms']:.4f} mainloop "
                  f"{r['mainloop_ms']:.4f} ms  rule {100 * r['rule_share']:.0f}% of step - mainloop", flush=True)
        with open(os.path.join(out, "rule_cost.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
