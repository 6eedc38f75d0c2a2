"""Bit-for-bit check of two package trees: two AdamW steps (bf16 and int8 states) on fixed data.

    python3 scripts/device/step_bits.py save ab_base /tmp/bits_base.pt   # the package in ab_base/
    python3 scripts/device/step_bits.py save . /tmp/bits_new.pt          # this checkout's
    python3 scripts/device/step_bits.py compare /tmp/bits_base.pt /tmp/bits_new.pt

``save`` imports ``forge_mcore`` from TREE and says which file it imported (a script's own folder
and PYTHONPATH come before the working directory: until session 14 the copies of this script run
from inside a tree imported the checkout's package whatever the tree). Each step's tile config is
saved with it and ``compare`` names the configs where they differ: a shape without a committed
winner (1000 x 4096) is tuned in each process, and the tuner may choose differently.
"""
import os
import sys

import torch


def save(tree: str, out: str) -> None:
    sys.path.insert(0, os.path.abspath(tree))
    import forge_mcore as fm
    from forge_mcore.bench.kernel import ARMS

    package = os.path.dirname(os.path.abspath(fm.__file__))
    if package != os.path.join(os.path.abspath(tree), "forge_mcore"):
        raise SystemExit(f"imported {package}, not {tree}'s package")
    print("package", package)
    steps = {}
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
            tensors = [w.cpu()] + [s.data.cpu() for s in state.slots if s is not None]
            steps[(arm, M, N, bt)] = (tensors, str(fm.ops.tuned_config(dy, w, state)))
    torch.save(steps, out)


def compare(base: str, *others: str) -> None:
    ref = torch.load(base)
    for other in others:
        got = torch.load(other)
        for key, (tensors, config) in ref.items():
            other_tensors, other_config = got[key]
            diffs = [(a != b).sum().item() for a, b in zip(tensors, other_tensors)]
            print(other, key, "equal" if not any(diffs) else f"DIFF: elements differing per tensor {diffs}, rows "
                  + " ".join(f"{(a != b).any(dim=1).nonzero().flatten()[[0, -1]].tolist()}" if n else "-"
                             for a, b, n in zip(tensors, other_tensors, diffs)),
                  "" if config == other_config else f"(configs differ: {config} vs {other_config})")


if __name__ == "__main__":
    {"save": save, "compare": compare}[sys.argv[1]](*sys.argv[2:])
