"""Session 45: each unit's main loop in the step against the same unit's main loop alone (the kernel with its
epilogue compiled out), from the consumers' phase stamps (``gluon_wgrad`` TRACE_TILES).

    python3 results/2026-12-06/session45/ml_trace.py [--cells 1024x4096:512:sgdm-bf16,...] [--vary f=v,...]

Per cell and arm prints, for each consumer c and its j-th unit, medians over the programs of: when its turn
wait began and its main loop began and ended (cycles from the program's first stamp), and the main loop's
length; for the step also the tile wait and the rule. Whether the rule and tile traffic beside a main loop
slow it, and which unit (the first carries the kernel's start) is longest.
"""

from __future__ import annotations

import argparse

import torch

from forge_mcore.bench.timeline import MAIN_LOOP, MAIN_LOOP_DONE, STORES_ISSUED, TILE_READY, TURN, cell_step
from forge_mcore.kernels import gluon_wgrad


def per_unit(trace: torch.Tensor, step: bool) -> None:
    trace = trace.to(torch.int64)
    programs, consumers, units, _ = trace.shape
    origin = torch.where(trace[..., TURN] > 0, trace[..., TURN], torch.iinfo(torch.int64).max).amin(dim=(1, 2))
    for j in range(units):
        for c in range(consumers):
            t = trace[:, c, j]
            ran = t[:, TURN] > 0
            if not ran.any():
                continue
            t, o = t[ran], origin[ran]
            med = lambda x: int(x.float().median())  # noqa: E731
            line = (f"  c{c} unit {j}: turn at {med(t[:, TURN] - o):6d}, loop {med(t[:, MAIN_LOOP] - o):6d}"
                    f"-{med(t[:, MAIN_LOOP_DONE] - o):6d} (length {med(t[:, MAIN_LOOP_DONE] - t[:, MAIN_LOOP]):5d})")
            if step:
                line += (f", tile wait {med(t[:, TILE_READY] - t[:, MAIN_LOOP_DONE]):5d}, rule "
                         f"{med(t[:, STORES_ISSUED] - t[:, TILE_READY]):5d}, ends {med(t[:, STORES_ISSUED] - o):6d}")
            print(line + f"  [{int(ran.sum())} programs]")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", default="1024x4096:512:sgdm-bf16,1024x4096:1024:sgdm-bf16,1024x4096:512:adamw-bf16")
    p.add_argument("--vary", default="", help="TileConfig fields replaced in the committed config (f=v[,f=v])")
    args = p.parse_args()
    for cell in args.cells.split(","):
        shape, bt, arm = cell.split(":")
        M, N = map(int, shape.split("x"))
        dy, x, w, state, hyper, tel, cfg = cell_step(shape, int(bt), arm)
        cfg = cfg.replaced(args.vary) if args.vary else cfg
        print(f"{cell}: {cfg}")
        for name, mainloop_only in (("step", False), ("main loop alone", True)):
            trace = gluon_wgrad.trace_buffer(cfg, M, N, w.device)
            for _ in range(3):  # (the last launch's stamps stay)
                gluon_wgrad.launch(cfg, dy, x, w, state, state.slot_tensors, hyper, tel.sumsq, tel.nonfinite_tiles,
                                   None, None, mainloop_only=mainloop_only, trace=trace)
            torch.cuda.synchronize()
            print(f" {name}:")
            per_unit(trace.cpu(), not mainloop_only)


if __name__ == "__main__":
    main()
