"""Adamax: Adam with an infinity-norm second moment (torch.optim.Adamax)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import div
from .base import Rule, StateSpec, register


@triton.jit
def adamax_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: weight_decay, 1-beta1, beta2, eps, clr = lr / bias_correction1
    g = g + h[0] * w
    s0 = s0 + h[1] * (g - s0)
    s1 = tl.maximum(h[2] * s1, tl.abs(g) + h[3])
    w = w - h[4] * div(s0, s1)
    return w, s0, s1, s2


@register
class Adamax(Rule):
    name = "adamax"
    defaults = dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    hyper_names = ("weight_decay", "one_minus_beta1", "beta2", "eps", "clr")
    triton_update = adamax_update
    torch_equivalent = torch.optim.Adamax

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("exp_avg", 0), StateSpec("exp_inf", 1, nonnegative=True))

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        beta1, beta2 = group["betas"]
        return [group["weight_decay"], 1.0 - beta1, beta2, group["eps"], group["lr"] / (1.0 - beta1**step)]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        wd, omb1, beta2, eps, clr = h
        g = g + wd * w
        s[0].add_(omb1 * (g - s[0]))
        torch.maximum(beta2 * s[1], g.abs() + eps, out=s[1])
        w.sub_(clr * (s[0] / s[1]))
