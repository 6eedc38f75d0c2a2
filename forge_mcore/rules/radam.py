"""RAdam, the rectified Adam (torch.optim.RAdam), coupled or decoupled weight decay."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import div, sqrt
from .base import Rule, StateSpec, register


@triton.jit
def radam_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: weight_decay, decay, 1-beta1, beta2, 1-beta2, eps, bias_correction1, lr,
    #    sqrt(bias_correction2), rect, adaptive (1.0 once rho_t > 5, else 0.0)
    g = g + h[0] * w
    w = w * h[1]
    s0 = s0 + h[2] * (g - s0)
    s1 = h[3] * s1 + h[4] * (g * g)
    upd = div(s0, h[6]) * h[7]
    adaptive_lr = div(h[8], sqrt(s1) + h[5])
    upd = tl.where(h[10] > 0.5, upd * adaptive_lr * h[9], upd)
    w = w - upd
    return w, s0, s1, s2


@register
class RAdam(Rule):
    name = "radam"
    defaults = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False)
    hyper_names = (
        "weight_decay", "decay", "one_minus_beta1", "beta2", "one_minus_beta2", "eps",
        "bias_correction1", "lr", "bias_correction2_sqrt", "rect", "adaptive",
    )
    triton_update = radam_update
    zero_stays_zero = True
    torch_equivalent = torch.optim.RAdam

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("exp_avg", 0), StateSpec("exp_avg_sq", 1, nonnegative=True))

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        lr, wd = group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        decoupled = group["decoupled_weight_decay"]
        bc2 = 1.0 - beta2**step
        rho_inf = 2.0 / (1.0 - beta2) - 1.0
        rho_t = rho_inf - 2.0 * step * beta2**step / bc2
        adaptive = rho_t > 5.0
        rect = (
            math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            if adaptive else 0.0
        )
        return [
            0.0 if decoupled else wd,
            1.0 - lr * wd if decoupled else 1.0,
            1.0 - beta1,
            beta2,
            1.0 - beta2,
            group["eps"],
            1.0 - beta1**step,
            lr,
            math.sqrt(bc2),
            rect,
            1.0 if adaptive else 0.0,
        ]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        wd, decay, omb1, beta2, omb2, eps, bc1, lr, bc2_sqrt, rect, adaptive = h
        g = g + wd * w
        w.mul_(decay)
        s[0].add_(omb1 * (g - s[0]))
        s[1].mul_(beta2).add_(omb2 * (g * g))
        upd = (s[0] / bc1) * lr
        if adaptive > 0.5:
            upd = upd * (bc2_sqrt / (s[1].sqrt() + eps)) * rect
        w.sub_(upd)
