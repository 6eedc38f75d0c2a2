"""Host microseconds per fused-step launch, by kernel: the Triton kernel goes through the bound
direct launcher, the Gluon kernels through Gluon's JIT launch (descriptors built per call).

One 4096 x 4096 AdamW bf16 weight at BT 512, each config forced; per arm the median over
ROUNDS of the enqueue time of CALLS launches (no synchronization inside a round: the GPU
queue absorbs them, so this is host time).

    python scripts/device/launch_host_time.py      # device machine; prints one JSON line per arm
"""

from __future__ import annotations

import json
import os
import statistics
import time

import torch

import forge_mcore as fm
from forge_mcore.kernels.configs import CONFIGS

CALLS, ROUNDS = int(os.environ.get("CALLS", 100)), int(os.environ.get("ROUNDS", 7))


def main() -> None:
    w = (torch.randn(4096, 4096, device="cuda") * 0.02).bfloat16()
    state = fm.ForgeParamState.create(w, "adamw", {"lr": 1e-4}, "bf16", "bf16")
    hyper = state.prepare_step(state.rule.make_group(lr=1e-4))
    dy = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    arms = {"triton 64x128 w4 s3 e2": next(c for c in CONFIGS if c.kernel == "triton" and c.block_m == 64
                                            and c.epilogue_stages == 2 and not c.prefetch),
            "gluon_ws": next(c for c in CONFIGS if c.kernel == "gluon_ws")}
    for name, cfg in arms.items():
        fm.fused_wgrad_step(dy, x, w, state, hyper, config=cfg)  # compile
        torch.cuda.synchronize()
        rounds = []
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            for _ in range(CALLS):
                fm.fused_wgrad_step(dy, x, w, state, hyper, config=cfg)
            rounds.append((time.perf_counter() - t0) / CALLS * 1e6)
            torch.cuda.synchronize()
        print(json.dumps({"arm": name, "host_us_per_launch": round(statistics.median(rounds), 2),
                          "rounds": [round(r, 2) for r in rounds]}), flush=True)


if __name__ == "__main__":
    main()
