"""One AdamW step (bf16 and int8 states) on fixed data with this tree's package; saves the results."""
import sys

import torch

import forge_mcore as fm
from forge_mcore.bench.kernel import ARMS

out = {}
for arm in ("adamw-bf16", "adamw-int8"):
    rule, state_dtype, hp, _ = ARMS[arm]
    for M, N, bt in ((4096, 4096, 1024), (1000, 4096, 512)):
        gen = torch.Generator(device="cuda").manual_seed(0)
        dy = torch.randn(bt, M, device="cuda", dtype=torch.bfloat16, generator=gen)
        x = torch.randn(bt, N, device="cuda", dtype=torch.bfloat16, generator=gen)
        w = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
        state = fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16")
        for _ in range(2):
            fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(state.rule.make_group(**hp)))
        out[(arm, M, N, bt)] = [w.cpu()] + [s.data.cpu() for s in state.slots if s is not None]
torch.save(out, sys.argv[1])
