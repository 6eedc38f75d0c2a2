"""Same tile config, same dY/X/weights, different rules and hyperparameters: is Lion's step slower
than SGD-m's because of its code or because of its data? (4096^2 BT 1024 on an H100: Lion on the tall
config 85.8 us in session 39's sweep, SGD-m 78.0 in session 45's grid; the same 128x128 tall kernel.)

    python3 results/2026-12-06/session46/rule_probe.py     (device; env CELLS, CONFIGS=tall,ring3)
    -> $OUT/rule_probe.csv

Per cell and config, every variant's step over rotating weight sets, all variants' graphs
interleaved (``bench.common.time_graphs``), ROUNDS rounds; medians.
"""

from __future__ import annotations

import csv
import functools
import os
import statistics

import torch

import forge_mcore as fm
from forge_mcore.bench.common import rotation_count, time_graphs
from forge_mcore.kernels.configs import TileConfig

CONFIGS = {
    "tall": TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_tall"),
    "ring3": TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3),
}
VARIANTS = {  # name: (rule, hyperparameters); the first two are the benchmark's arms
    "sgdm": ("sgd", dict(lr=1e-4, momentum=0.9)),
    "lion": ("lion", dict(lr=1e-5, weight_decay=0.01)),
    "lion-wd0": ("lion", dict(lr=1e-5)),
    "lion-lr1e-4": ("lion", dict(lr=1e-4, weight_decay=0.01)),
    "sgdm-wd": ("sgd", dict(lr=1e-4, momentum=0.9, weight_decay=0.01)),
    "sgd": ("sgd", dict(lr=1e-4)),
}
CELLS = os.environ.get("CELLS", "4096x4096:1024").split(",")
ROUNDS = int(os.environ.get("ROUNDS", 3))


def main(variants: dict = VARIANTS, csv_name: str = "rule_probe.csv", column: str = "variant") -> None:
    """Each variant (rule, hyperparameters[, decay]) on buffers of its own, per cell and config; a third field is
    written into each set's hyper buffer as its second scalar (Lion's decay) after ``prepare_step``
    (session 47's ``decay_probe.py``)."""
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    rows = []
    for cell in CELLS:
        shape, bt = cell.split(":")
        M, N = map(int, shape.split("x"))
        gen = torch.Generator(device="cuda").manual_seed(0)
        dy = torch.randn(int(bt), M, device="cuda", dtype=torch.bfloat16, generator=gen)
        x = torch.randn(int(bt), N, device="cuda", dtype=torch.bfloat16, generator=gen)
        w0 = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
        for cname in os.environ.get("CONFIGS", "tall,ring3").split(","):
            cfg = CONFIGS[cname]
            arms = {}
            for vname, (rule, hp, *decay) in variants.items():
                sets = []
                for _ in range(rotation_count(6 * w0.nbytes + dy.nbytes + x.nbytes)):
                    w = w0.clone()
                    state = fm.ForgeParamState.create(w, rule, hp, "bf16", "bf16")
                    hyper = state.prepare_step(state.rule.make_group(**hp))
                    if decay:
                        hyper[1] = decay[0]
                    sets.append((w, state, hyper))
                arms[vname] = [functools.partial(fm.fused_wgrad_step, dy, x, w, s, h, config=cfg)
                               for w, s, h in sets]
            print(f"{cell} {cname}: {len(sets)} sets per variant", flush=True)
            times = {v: [] for v in arms}
            for _ in range(ROUNDS):
                for v, ms in time_graphs(arms, reps=30).items():
                    times[v].append(ms)
            for v, t in times.items():
                rows.append({"cell": cell, "config": cname, column: v, "us": 1000 * statistics.median(t),
                             "rounds": " ".join(f"{1000 * x:.2f}" for x in t)})
                print(rows[-1], flush=True)
            del arms  # (the LM head's sets: free them before the next config's)
            torch.cuda.empty_cache()
    with open(os.path.join(os.environ.get("OUT", "."), csv_name), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
