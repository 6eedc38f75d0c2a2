"""The main job until the training driver exists: a short FORGE run on whatever is here.

    python -m forge_mcore.demo [--steps 60] [--rule adamw] [--state-dtype bf16]

Trains a small MLP to imitate a fixed random teacher network. Every linear is
fused by ``forge_mcore.patch``: on a CUDA GPU its weights step inside the
Triton weight-gradient kernel (bf16 weights), on a CPU through the torch
reference of the same rule (fp32 weights). Prints the loss as it falls and the
gradient bytes the run never allocated.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

import forge_mcore


def _mlp(width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    layers.append(nn.Linear(width, width))
    return nn.Sequential(*layers)


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--rule", default="adamw", choices=forge_mcore.available_rules())
    p.add_argument("--state-dtype", default="bf16", choices=forge_mcore.available_codecs())
    p.add_argument("--lr", type=float, default=2e-3)
    args = p.parse_args(argv)

    torch.manual_seed(0)
    cuda = torch.cuda.is_available()
    device, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    teacher = _mlp(args.width, args.depth).to(device, dtype).requires_grad_(False)
    student = _mlp(args.width, args.depth).to(device, dtype)
    # patch() runs one probe forward to see which weights each forward reads exactly once
    probe = (torch.randn(2, args.width, device=device, dtype=dtype),)
    opt = forge_mcore.patch(student, rule=args.rule, state_dtype=args.state_dtype, lr=args.lr, clip="none",
                            probe_inputs=probe)
    print(f"device: {device} ({'Triton kernel' if cuda else 'torch reference backend'}), {dtype}")
    print(opt.summary())

    loss = torch.tensor(float("nan"))
    for step in range(1, args.steps + 1):
        x = torch.randn(args.batch, args.width, device=device, dtype=dtype)
        loss = nn.functional.mse_loss(student(x).float(), 10 * teacher(x).float())
        loss.backward()  # each fused weight is stepped here, inside its own backward
        opt.step()  # the unfused rest (none in this model) and the iteration's bookkeeping
        opt.zero_grad()
        if step == 1 or step % 10 == 0 or step == args.steps:
            print(f"step {step:4d}  loss {loss.item():.5f}  grad norm {opt.grad_norm().item():.4f}")
    saved = opt.engine.gradient_bytes_saved()
    print(f"gradient bytes never allocated: {saved:,} ({saved / 2**20:.2f} MiB)")
    return loss.item()


if __name__ == "__main__":
    main()
