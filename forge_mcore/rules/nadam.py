"""NAdam with momentum decay (torch.optim.NAdam), coupled or decoupled weight decay."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import div, sqrt
from .base import Rule, StateSpec, _check_nonneg, register


def _round_fp32(x: float) -> float:
    # torch keeps mu_product as an fp32 tensor; round the same way so the
    # bias-correction scalars agree with torch.optim.NAdam step after step.
    return struct.unpack("f", struct.pack("f", x))[0]


@triton.jit
def nadam_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: weight_decay, decay, 1-beta1, beta2, 1-beta2, bias_correction2, eps,
    #    grad_coef = lr (1 - mu_t) / (1 - prod mu), mom_coef = lr mu_{t+1} / (1 - prod mu * mu_{t+1})
    g = g + h[0] * w
    w = w * h[1]
    s0 = s0 + h[2] * (g - s0)
    s1 = h[3] * s1 + h[4] * (g * g)
    denom = sqrt(div(s1, h[5])) + h[6]
    w = w - h[7] * div(g, denom)
    w = w - h[8] * div(s0, denom)
    return w, s0, s1, s2


@register
class NAdam(Rule):
    name = "nadam"
    defaults = dict(
        lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
        momentum_decay=4e-3, decoupled_weight_decay=False,
    )
    hyper_names = (
        "weight_decay", "decay", "one_minus_beta1", "beta2", "one_minus_beta2",
        "bias_correction2", "eps", "grad_coef", "mom_coef",
    )
    triton_update = nadam_update
    zero_stays_zero = True
    torch_equivalent = torch.optim.NAdam

    def validate(self, group: Mapping[str, Any]) -> None:
        super().validate(group)
        _check_nonneg("momentum_decay", group["momentum_decay"])

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("exp_avg", 0), StateSpec("exp_avg_sq", 1, nonnegative=True))

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        lr, wd, md = group["lr"], group["weight_decay"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        decoupled = group["decoupled_weight_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * md))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * md))
        mu_product = _round_fp32(scalars.get("mu_product", 1.0) * mu)
        scalars["mu_product"] = mu_product
        return [
            0.0 if decoupled else wd,
            1.0 - lr * wd if decoupled else 1.0,
            1.0 - beta1,
            beta2,
            1.0 - beta2,
            1.0 - beta2**step,
            group["eps"],
            lr * (1.0 - mu) / (1.0 - mu_product),
            lr * mu_next / (1.0 - mu_product * mu_next),
        ]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        wd, decay, omb1, beta2, omb2, bc2, eps, grad_coef, mom_coef = h
        g = g + wd * w
        w.mul_(decay)
        s[0].add_(omb1 * (g - s[0]))
        s[1].mul_(beta2).add_(omb2 * (g * g))
        denom = (s[1] / bc2).sqrt() + eps
        w.sub_(grad_coef * (g / denom))
        w.sub_(mom_coef * (s[0] / denom))
