"""Session 22 call 4 (with oob_tiles.patch applied): where the tile traffic's cost lies. Per cell and
arm, interleaved in one time_graphs call:
  step      the committed winner, weight/state sets rotated (the tile bytes come from HBM)
  l2        the same step on one set, replayed (its tile bytes stay in L2 where they fit: 1024 x 4096)
  oob       the step on sets whose descriptors cover one tile (oob_tiles.patch): every other tile's
            fill is TMA zero-fill and its stores are dropped, so the schedule, the rule and the
            shared-memory/TMA work stay and the weight/state bytes leave L2 and HBM
  mainloop  the main loop alone
  copy      a plain copy of the weight and state bytes (read once, written once)
    CELLS=1024x4096:512,... ARMS=adamw-bf16,sgdm-bf16 python3 io_oob.py   -> $OUT/io_oob.csv
"""

from __future__ import annotations

import csv
import os
import sys

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import time_graphs
from forge_mcore.bench.kernel import ForgeArm
from forge_mcore.kernels import gluon_wgrad

CELLS = os.environ.get("CELLS", "1024x4096:512").split(",")
ARMS = os.environ.get("ARMS", "adamw-bf16").split(",")


def run_cell(shape: str, bt: int, arm: str) -> dict:
    normal, clipped = ForgeArm.build(shape, bt, arm), ForgeArm.build(shape, bt, arm)
    gluon_wgrad.DIAG_OOB_WEIGHTS.update(w.data_ptr() for w in clipped.weights)
    tel = fm.StepTelemetry.zeros("cuda")
    normal.steps(tel)[0]()
    config = ops.tuned_config(normal.dy, normal.weights[0], normal.states[0])
    # the clipped step writes its first tile only (rows x half of the weight)
    rows, half = config.block_m // config.row_blocks, config.block_n // 2
    w = clipped.weights[0]
    before = w.clone()
    clipped.steps(tel, config)[0]()
    torch.cuda.synchronize()
    first_changed = not torch.equal(before[:rows, :half], w[:rows, :half])
    rest_kept = torch.equal(before[rows:], w[rows:]) and torch.equal(before[:rows, half:], w[:rows, half:])
    sink = torch.zeros(1, device="cuda")
    step = normal.steps(tel, config)
    tile_bytes = (normal.bytes_moved - normal.dy.nbytes - normal.x.nbytes) // 2
    sources = [torch.empty(tile_bytes, device="cuda", dtype=torch.uint8) for _ in step]
    targets = [torch.empty_like(t) for t in sources]
    ms = time_graphs({
        "step": step,
        "l2": [step[0]] * len(step),
        "oob": clipped.steps(tel, config),
        "mainloop": [lambda w=w, s=s: ops.wgrad_mainloop(normal.dy, normal.x, w, sink=sink, config=config, state=s)
                     for w, s in zip(normal.weights, normal.states)],
        "copy": [lambda s=s, t=t: t.copy_(s) for s, t in zip(sources, targets)],
    }, reps=30)
    return dict(cell=f"{shape}:{bt}", arm=arm, kernel=config.kernel, block=f"{config.block_m}x{config.block_n}",
                sets=len(step), tile_mib=tile_bytes / 2**20, oob_first_tile_written=first_changed,
                oob_rest_untouched=rest_kept, **{f"{k}_us": 1000 * v for k, v in ms.items()})


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    rows = []
    for cell in CELLS:
        shape, bt = cell.split(":")
        for arm in ARMS:
            r = run_cell(shape, int(bt), arm)
            rows.append(r)
            print(f"{r['cell']:>16} {r['arm']:<10} {r['kernel']:<10} step {r['step_us']:7.1f} l2 {r['l2_us']:7.1f} "
                  f"oob {r['oob_us']:7.1f} mainloop {r['mainloop_us']:7.1f} copy {r['copy_us']:7.1f} us "
                  f"(oob checks {r['oob_first_tile_written']}/{r['oob_rest_untouched']})", flush=True)
            with open(os.path.join(os.environ.get("OUT", "."), "io_oob.csv"), "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            gluon_wgrad.DIAG_OOB_WEIGHTS.clear()
            torch.cuda.empty_cache()
    sys.exit(0 if all(r["oob_first_tile_written"] and r["oob_rest_untouched"] for r in rows) else 1)


if __name__ == "__main__":
    main()
