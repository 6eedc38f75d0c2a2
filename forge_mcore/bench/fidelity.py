"""Numerical fidelity of the fused step against an fp32 reference (paper App. E).

    python -m forge_mcore.bench.fidelity --out results/fidelity

V=1024, H=4096, BT=2048, AdamW lr 1e-3, betas (0.9, 0.999), wd 0.01,
W0 ~ N(0, 0.02) rounded to bf16, fresh seeded dY and X ~ N(0, 1) each step (rounded to bf16,
the operands every arm sees), 20 steps. Reference: the same steps in fp32 end
to end. rms-rel(W) = ||W - W_ref||_2 / ||W_ref||_2 (the fp32 master where an
arm keeps one). Arms within one recipe compare: standard bf16 vs FORGE bf16
(bf16 weight and moments), standard fp32-master vs FORGE fp32-master.
"""

from __future__ import annotations

import argparse
import csv
import os

import torch

V, H, BT, STEPS = 1024, 4096, 2048, 20
HP = dict(lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01, eps=1e-8)


def _inputs(step: int, device: str):
    gen = torch.Generator(device=device).manual_seed(1000 + step)
    dy = torch.randn(BT, V, device=device, generator=gen).bfloat16()
    x = torch.randn(BT, H, device=device, generator=gen).bfloat16()
    return dy, x


def _rms_rel(w: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    d = w.double() - ref.double()
    return (d.norm() / ref.double().norm()).item(), d.abs().max().item()


def run(device: str = "cuda", steps: int = STEPS) -> list[dict]:
    import forge_mcore as fm

    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is fp32 end to end
    try:
        gen = torch.Generator(device=device).manual_seed(0)
        # bf16-representable start: every arm (and the fp32 reference) begins from the same
        # values, as a master created from a bf16 parameter would (megatron does the same).
        w0 = (torch.randn(V, H, device=device, generator=gen) * 0.02).bfloat16().float()

        ref = torch.nn.Parameter(w0.clone())
        ref_opt = torch.optim.AdamW([ref], foreach=False, **HP)

        std_bf16 = torch.nn.Parameter(w0.bfloat16())
        std_bf16_opt = torch.optim.AdamW([std_bf16], fused=True, **HP)
        std_master = torch.nn.Parameter(w0.clone())
        std_master_opt = torch.optim.AdamW([std_master], fused=True, **HP)

        forge_arms = {
            "forge bf16": ("bf16", "bf16"),
            "forge fp32-master": ("fp32", "fp32_master"),
            "forge int8": ("int8", "bf16"),
            "forge fp8": ("fp8", "bf16"),
            "forge bf16 SR store": ("bf16", "bf16_sr"),
            "forge fp32 (fp32 weight)": ("fp32", "fp32"),
        }
        arms = {}
        for name, (codec, store) in forge_arms.items():
            w = w0.clone() if store == "fp32" else w0.bfloat16()
            state = fm.ForgeParamState.create(w, "adamw", HP, codec, store)
            arms[name] = (w, state)
        group = fm.get_rule("adamw").make_group(**HP)

        for step in range(steps):
            dy, x = _inputs(step, device)
            ref.grad = dy.float().t() @ x.float()
            ref_opt.step()
            g_bf16 = dy.t() @ x  # cuBLAS, rounded to bf16 on store: what a standard backward keeps
            std_bf16.grad = g_bf16
            std_bf16_opt.step()
            std_master.grad = g_bf16.float()
            std_master_opt.step()
            for w, state in arms.values():
                xs = (dy.float(), x.float()) if w.dtype == torch.float32 else (dy, x)
                fm.fused_wgrad_step(*xs, w, state, state.prepare_step(group))

        rows = []
        for name, w in (("standard bf16", std_bf16.detach()), ("standard fp32-master", std_master.detach())):
            rows.append({"arm": name, **dict(zip(("rms_rel", "max_abs"), _rms_rel(w, ref.detach())))})
        for name, (w, state) in arms.items():
            final = state.master if state.master is not None else w
            rows.append({"arm": name, **dict(zip(("rms_rel", "max_abs"), _rms_rel(final, ref.detach())))})
        return rows
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=STEPS)
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rows = run(steps=args.steps)
    with open(os.path.join(args.out, "fidelity.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["arm", "rms_rel", "max_abs"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"{'arm':<28} {'rms-rel(W)':>12} {'max |dW|':>12}")
    for r in rows:
        print(f"{r['arm']:<28} {r['rms_rel']:>12.4e} {r['max_abs']:>12.4e}")


if __name__ == "__main__":
    main()
