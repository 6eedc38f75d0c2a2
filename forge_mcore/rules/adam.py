"""Adam and AdamW, with amsgrad (torch.optim.Adam / torch.optim.AdamW)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import IEEE_MATH, div, sqrt
from .base import Rule, StateSpec, register

AMSGRAD = 1


@triton.jit
def _adam_step(g, w, s0, s1, s2, h, VARIANT: tl.constexpr, DECOUPLED: tl.constexpr):
    # h: weight_decay (coupled), decay (decoupled), 1-beta1, beta2, 1-beta2,
    #    eps, step_size = lr / bias_correction1, sqrt(bias_correction2)
    # Each class applies only its own decay (Adam's decoupled factor is 1, AdamW's coupled
    # weight_decay 0): one multiply per element less than applying both.
    if DECOUPLED:
        w = w * h[1]
    else:
        g = g + h[0] * w
    s0 = s0 + h[2] * (g - s0)
    s1 = h[3] * s1 + h[4] * (g * g)
    if VARIANT & 1:
        s2 = tl.maximum(s2, s1)
        v = s2
    else:
        v = s1
    if IEEE_MATH:  # torch's own order, bit-faithful: lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
        w = w - h[6] * div(s0, div(sqrt(v), h[7]) + h[5])
    else:
        # the same quotient with sqrt(bc2) moved onto the per-step scalars, lr sqrt(bc2) / bc1 and
        # eps sqrt(bc2) (Kingma & Ba's own form): one multiply per element fewer
        w = w - (h[6] * h[7]) * div(s0, sqrt(v) + h[5] * h[7])
    return w, s0, s1, s2


@triton.jit
def adam_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    return _adam_step(g, w, s0, s1, s2, h, VARIANT, False)


@triton.jit
def adamw_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    return _adam_step(g, w, s0, s1, s2, h, VARIANT, True)


class _AdamBase(Rule):
    hyper_names = (
        "weight_decay", "decay", "one_minus_beta1", "beta2", "one_minus_beta2",
        "eps", "step_size", "bias_correction2_sqrt",
    )
    zero_stays_zero = True
    decoupled: bool

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        specs = (StateSpec("exp_avg", 0), StateSpec("exp_avg_sq", 1, nonnegative=True))
        if group["amsgrad"]:
            specs += (StateSpec("max_exp_avg_sq", 2, nonnegative=True),)
        return specs

    def variant(self, group: Mapping[str, Any]) -> int:
        return AMSGRAD if group["amsgrad"] else 0

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        lr, wd = group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        return [
            0.0 if self.decoupled else wd,
            1.0 - lr * wd if self.decoupled else 1.0,
            1.0 - beta1,
            beta2,
            1.0 - beta2,
            group["eps"],
            lr / (1.0 - beta1**step),
            math.sqrt(1.0 - beta2**step),
        ]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        wd, decay, omb1, beta2, omb2, eps, step_size, bc2_sqrt = h
        g = g + wd * w
        w.mul_(decay)
        s[0].add_(omb1 * (g - s[0]))
        s[1].mul_(beta2).add_(omb2 * (g * g))
        v = s[1]
        if variant & AMSGRAD:
            torch.maximum(s[2], s[1], out=s[2])
            v = s[2]
        denom = v.sqrt() / bc2_sqrt + eps
        w.sub_(step_size * (s[0] / denom))


@register
class Adam(_AdamBase):
    name = "adam"
    defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False)
    decoupled = False
    triton_update = adam_update
    torch_equivalent = torch.optim.Adam


@register
class AdamW(_AdamBase):
    name = "adamw"
    defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False)
    decoupled = True
    triton_update = adamw_update
    torch_equivalent = torch.optim.AdamW
