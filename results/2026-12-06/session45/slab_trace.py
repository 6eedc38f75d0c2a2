"""Session 45 probe: how long each dY/X slab takes from its load to its consumer's wait returning, in the step
and in its main loop alone, and whether the tile ring's fills in flight lengthen it.

    patch -p1 < results/2026-12-06/session45/slab_trace.patch     (device copy of the tree)
    python3 results/2026-12-06/session45/slab_trace.py [--cells 1024x4096:512:sgdm-bf16,...] [--vary f=v,...]

Per cell (its committed config), step and main loop alone: the kernel stamps, per program and slab step, when
the slab producer issues the slab's loads, when its consumer starts waiting for it and when that wait returns;
and per tile-ring half when its buffer's store has been read and when its fill is issued (``_slab_stamp``). A
wait longer than 100 cycles returns when the slab lands, so its issue-to-return time is the slab's latency.
Prints medians over programs and steps: the share of k-steps that wait, the slab latency of those, the cycles
waited per program, the latency of the slabs that had a tile fill issued during their trip against the rest,
and the wait by k-step of the program's first unit and of the later ones; and in which quarter of the main
loop running at the time each tile-ring store is read and each fill issued. Saves the raw traces
($OUT/slab_trace.pt: per cell and arm, [programs, steps, 5] int64).
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch

from forge_mcore.bench.timeline import cell_step
from forge_mcore.kernels import gluon_wgrad

ISSUE, WAIT, RETURN, STORE_READ, FILL = range(5)
BLOCKED = 100  # cycles: a wait that long ended when its slab landed


def summarize(trace: torch.Tensor, num_k: int) -> str:
    latency, latency_fill, latency_quiet, waited, blocked, steps = [], [], [], [], 0, 0
    first_unit = [[] for _ in range(num_k)]
    later = [[] for _ in range(num_k)]
    for p in trace.to(torch.int64):
        ran = p[:, ISSUE] > 0
        fills = p[:, FILL][p[:, FILL] > 0]
        total = 0
        for s in torch.nonzero(ran).flatten().tolist():
            issue, wait, ret = p[s, ISSUE].item(), p[s, WAIT].item(), p[s, RETURN].item()
            if wait == 0:
                continue
            steps += 1
            total += ret - wait
            (first_unit if s < num_k else later)[s % num_k].append(ret - wait)
            if ret - wait > BLOCKED:
                blocked += 1
                latency.append(ret - issue)
                in_flight = bool(((fills > issue) & (fills < ret)).any())
                (latency_fill if in_flight else latency_quiet).append(ret - issue)
        waited.append(total)
    med = lambda xs: int(statistics.median(xs)) if xs else 0  # noqa: E731
    quarters = {STORE_READ: [0] * 4, FILL: [0] * 4}  # tile events by quarter of the main loop they fall in
    for p in trace.to(torch.int64):
        starts = p[::num_k, WAIT]  # each unit's first wait: its main loop's start
        starts = starts[starts > 0]
        for column, counts in quarters.items():
            for t in p[:, column][p[:, column] > 0].tolist():
                u = int((starts <= t).sum()) - 1
                if 0 <= u < len(starts) - 1:
                    span = (starts[u + 1] - starts[u]).item()
                    counts[min(3, int(4 * (t - starts[u].item()) / max(span, 1)))] += 1
    lines = [f"    k-steps waiting: {blocked} of {steps} ({blocked / max(steps, 1):.2f}); slab latency of those "
             f"{med(latency)} cycles (with a tile fill issued in flight {med(latency_fill)}, n={len(latency_fill)}; "
             f"without {med(latency_quiet)}, n={len(latency_quiet)}); waited per program {med(waited)}",
             "    wait by k-step, first unit: " + " ".join(str(med(w)) for w in first_unit),
             "    wait by k-step, later units: " + " ".join(str(med(w)) for w in later),
             f"    tile stores read, by quarter of the main loop then running: {quarters[STORE_READ]}; fills issued: "
             f"{quarters[FILL]}"]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", default="1024x4096:512:sgdm-bf16,1024x4096:1024:sgdm-bf16,1024x4096:512:adamw-bf16")
    p.add_argument("--vary", default="", help="also the step of the committed config with these TileConfig fields "
                   "replaced (session 46: serial_fills=False)")
    args = p.parse_args()
    raw = {}
    for cell in args.cells.split(","):
        shape, bt, arm = cell.split(":")
        M, N = map(int, shape.split("x"))
        dy, x, w, state, hyper, tel, cfg = cell_step(shape, int(bt), arm)
        programs = gluon_wgrad._programs(cfg, M, N, w.device.index)
        tiles = -(-gluon_wgrad._tiles(cfg, M, N) // programs)
        num_k = -(-int(bt) // cfg.block_k)
        print(f"{cell}: {cfg}")
        saved = {}
        arms = [("step", cfg, False), ("main loop alone", cfg, True)]
        if args.vary:
            arms.append((f"step, {args.vary}", cfg.replaced(args.vary), False))
        for name, arm_cfg, mainloop_only in arms:
            trace = torch.zeros(programs, tiles * num_k, 5, dtype=torch.int64, device=w.device)
            for _ in range(3):
                trace.zero_()
                gluon_wgrad.launch(arm_cfg, dy, x, w, state, state.slot_tensors, hyper, tel.sumsq,
                                   tel.nonfinite_tiles, None, None, mainloop_only=mainloop_only, slab_trace=trace)
            torch.cuda.synchronize()
            print(f"  {name}:\n{summarize(trace.cpu(), num_k)}", flush=True)
            saved[(cell, name)] = trace.cpu()
        raw.update(saved)
    torch.save(raw, os.path.join(os.environ.get("OUT", "."), "slab_trace.pt"))


if __name__ == "__main__":
    main()
