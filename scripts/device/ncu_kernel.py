"""A few fused steps of one kernel-bench cell, for Nsight Compute to profile one of them.

    ncu --clock-control none -k regex:fused_step -s 2 -c 1 --section SpeedOfLight ... \
        python3 scripts/device/ncu_kernel.py --cell 4096x4096:512:adamw-bf16

The cell is the kernel bench's (``forge_mcore.bench.kernel.ARMS``): the same data, the
tuned config (``FORGE_GLUON=0`` keeps to the Triton kernel). Five steps on five weight
sets (the first compiles), so ``-s 2`` profiles a step whose weight and states are not in
L2 from the step before. ``--mainloop`` follows each step with the same kernel and config, its
epilogue compiled out (profile it with ``-k regex:fused_step -s 5``: launches alternate).
``--nan-grad`` gives every step a NaN dY: each tile's rule is skipped, its weight and state tiles
still move (``scripts/device/rule_cost.py``'s "nan" arm).
``--replace num_stages=6`` runs every launch after the first (which looks the winner up) on the
winner with those ``TileConfig`` fields replaced.
``scripts/device/ncu_kernel.sh`` runs it over several cells.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.kernel import ARMS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", required=True, help="MxN:BT:arm, e.g. 4096x4096:512:adamw-bf16")
    parser.add_argument("--mainloop", action="store_true",
                        help="profile the same kernel and config with its epilogue compiled out (ops.wgrad_mainloop)")
    parser.add_argument("--replace", default="",
                        help="TileConfig fields to replace in the committed winner, e.g. num_stages=6")
    parser.add_argument("--nan-grad", action="store_true",
                        help="a NaN dY: every tile's rule skipped, its tiles still loaded and stored")
    args = parser.parse_args()
    shape, bt, arm = args.cell.split(":")
    M, N = map(int, shape.split("x"))
    rule, state_dtype, hp, _ = ARMS[arm]
    gen = torch.Generator(device="cuda").manual_seed(0)
    dy = torch.randn(int(bt), M, device="cuda", dtype=torch.bfloat16, generator=gen)
    x = torch.randn(int(bt), N, device="cuda", dtype=torch.bfloat16, generator=gen)
    if args.nan_grad:
        dy.fill_(float("nan"))
    tel = fm.StepTelemetry.zeros("cuda")
    config = None  # the first step looks up the committed winner; ``--replace`` applies from the second
    for _ in range(5):
        w = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
        state = fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16")
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(state.rule.make_group(**hp)), telemetry=tel,
                            config=config)
        if config is None:
            config = ops.tuned_config(dy, w, state)
            config = config.replaced(args.replace) if args.replace else config
        if args.mainloop:
            ops.wgrad_mainloop(dy, x, w, sink=tel.sumsq, config=config, state=state)
    torch.cuda.synchronize()
    print(f"[ncu_kernel] {args.cell} config {asdict(config)}", flush=True)


if __name__ == "__main__":
    main()
