"""Session 47: why Lion with weight decay is slower than without on the tall config (session 46's rule_probe, an
H100: 89.0 against 85.1 us at 4096^2 BT 1024, the same binary; on an H200's sweep Lion on tall 79.8 us against
SGD-m's 72.4). Is it the decay's value (the same kernel, hyper[1] = 1 - lr wd), or where each arm's buffers lie?

    python3 results/2026-12-06/session47/decay_probe.py     (device; env CELLS, CONFIGS=tall,ring3, ROUNDS)
    -> $OUT/decay_probe.csv

Per config, interleaved (``bench.common.time_graphs``), each arm with buffers of its own (allocated in the order
listed): Lion (lr 1e-5) with the benchmark's decay 1 - 1e-7 (0x3F7FFFFE) on three allocations, with decay 1.0 on
two, with decay 1 + 1.2e-7 (0x3F800001: the same distance from 1, its mantissa zeros) and 1 - 2^-12 (0x3F7FF000),
Lion with lr 1e-3 (most weights change every step, as SGD-m's do), and SGD-m (lr 1e-4, momentum 0.9). The decay
is written into each set's hyper buffer after ``prepare_step``.
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
LION = ("lion", dict(lr=1e-5, weight_decay=0.01))
ARMS = {  # name: (rule, hyperparameters, the decay written into hyper[1] or None)
    "lion 1-1e-7 a": (*LION, None), "lion 1-1e-7 b": (*LION, None), "lion 1-1e-7 c": (*LION, None),
    "lion 1.0 a": (*LION, 1.0), "lion 1.0 b": (*LION, 1.0),
    "lion 1+1.2e-7": (*LION, 1.0 + 2.0 ** -23), "lion 1-2^-12": (*LION, 1.0 - 2.0 ** -12),
    "lion lr 1e-3": ("lion", dict(lr=1e-3, weight_decay=0.01), None),
    "sgdm": ("sgd", dict(lr=1e-4, momentum=0.9), None),
}
CELLS = os.environ.get("CELLS", "4096x4096:1024").split(",")
ROUNDS = int(os.environ.get("ROUNDS", 3))


def main() -> None:
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
            for name, (rule, hp, decay) in ARMS.items():
                sets = []
                for _ in range(rotation_count(6 * w0.nbytes + dy.nbytes + x.nbytes)):
                    w = w0.clone()
                    state = fm.ForgeParamState.create(w, rule, hp, "bf16", "bf16")
                    hyper = state.prepare_step(state.rule.make_group(**hp))
                    if decay is not None:
                        hyper[1] = decay
                    sets.append((w, state, hyper))
                arms[name] = [functools.partial(fm.fused_wgrad_step, dy, x, w, s, h, config=cfg) for w, s, h in sets]
            print(f"{cell} {cname}: {len(sets)} sets per arm; hyper of the last: {sets[-1][2].tolist()}", flush=True)
            times = {v: [] for v in arms}
            for _ in range(ROUNDS):
                for v, ms in time_graphs(arms, reps=30).items():
                    times[v].append(ms)
            for v, t in times.items():
                rows.append(dict(cell=cell, config=cname, arm=v, us=1000 * statistics.median(t),
                                 rounds=" ".join(f"{1000 * x:.2f}" for x in t)))
                print(rows[-1], flush=True)
            del arms
            torch.cuda.empty_cache()
    with open(os.path.join(os.environ.get("OUT", "."), "decay_probe.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
