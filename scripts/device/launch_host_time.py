"""Host microseconds per fused-step launch, by kernel and launch path.

One 4096 x 4096 AdamW bf16 weight at BT 512. Arms: the Triton kernel (the committed 64x128
config) and the ping-pong Gluon kernel (``gluon_ws``), each
  full    -- ``fused_wgrad_step(..., config=cfg)``: validation, plan lookup, direct launch;
  replay  -- the engine's repeated call (its telemetry, no config, dY/X of one layout), with the
             tuner's choice pinned to cfg: ``ops._Replay``'s bound launch.
Per arm the median over ROUNDS of the enqueue time of CALLS launches (no synchronization
inside a round: the GPU queue absorbs them, so this is host time).

    python scripts/device/launch_host_time.py      # device machine; prints one JSON line per arm
"""

from __future__ import annotations

import json
import os
import statistics
import time

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.kernels.configs import CONFIGS

CALLS, ROUNDS = int(os.environ.get("CALLS", 100)), int(os.environ.get("ROUNDS", 7))


def time_arm(cfg, path: str, dy: torch.Tensor, x: torch.Tensor) -> dict:
    w = (torch.randn(4096, 4096, device="cuda") * 0.02).bfloat16()
    state = fm.ForgeParamState.create(w, "adamw", {"lr": 1e-4}, "bf16", "bf16")
    hyper = state.prepare_step(state.rule.make_group(lr=1e-4))
    tel = fm.StepTelemetry.zeros("cuda")
    before = dict(ops.launch_counts)

    def step():
        if path == "full":
            fm.fused_wgrad_step(dy, x, w, state, hyper, config=cfg)
        else:
            fm.fused_wgrad_step(dy, x, w, state, hyper, telemetry=tel)

    for _ in range(3):  # compile, bind
        step()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            step()
        rounds.append((time.perf_counter() - t0) / CALLS * 1e6)
        torch.cuda.synchronize()
    counts = {k: ops.launch_counts[k] - before.get(k, 0) for k in ("gluon", "replay")}
    return {"path": path, "host_us_per_launch": round(statistics.median(rounds), 2),
            "rounds": [round(r, 2) for r in rounds], "launch_counts": counts}


def main() -> None:
    dy = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    kernels = {"triton": next(c for c in CONFIGS if c.kernel == "triton" and c.block_m == 64
                              and c.epilogue_stages == 2 and not c.prefetch),
               "gluon_ws": next(c for c in CONFIGS if c.kernel == "gluon_ws")}
    select = ops._select_config
    try:
        for name, cfg in kernels.items():
            ops._select_config = lambda *args, _cfg=cfg: _cfg  # the tuner's choice pinned to this kernel
            for path in ("full", "replay"):
                print(json.dumps({"kernel": name, **time_arm(cfg, path, dy, x)}), flush=True)
    finally:
        ops._select_config = select


if __name__ == "__main__":
    main()
