"""Session 22 call 5 (with call4/oob_tiles.patch applied): scripts/device/ncu_kernel.py's five steps of a
cell, with --oob the weights' descriptors clipped to one tile (the tile bytes leave L2 and HBM; the TMA
zero-fills the fills and drops the stores), for Nsight to compare the step, its OOB twin and its main
loop on the on-chip units (shared-memory banks, TMA, tensor pipe, stall reasons)."""

from __future__ import annotations

import sys

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.kernel import ARMS
from forge_mcore.kernels import gluon_wgrad

cell, mode = sys.argv[1], sys.argv[2]  # mode: step | oob | mainloop
shape, bt, arm = cell.split(":")
M, N = map(int, shape.split("x"))
rule, state_dtype, hp, _ = ARMS[arm]
gen = torch.Generator(device="cuda").manual_seed(0)
dy = torch.randn(int(bt), M, device="cuda", dtype=torch.bfloat16, generator=gen)
x = torch.randn(int(bt), N, device="cuda", dtype=torch.bfloat16, generator=gen)
tel = fm.StepTelemetry.zeros("cuda")
for _ in range(5):
    w = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
    state = fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16")
    if mode == "oob":
        gluon_wgrad.DIAG_OOB_WEIGHTS.add(w.data_ptr())
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(state.rule.make_group(**hp)), telemetry=tel)
    if mode == "mainloop":
        ops.wgrad_mainloop(dy, x, w, sink=tel.sumsq, config=ops.tuned_config(dy, w, state), state=state)
torch.cuda.synchronize()
print(f"[ncu_oob] {cell} {mode} config {ops.tuned_config(dy, w, state)}", flush=True)
