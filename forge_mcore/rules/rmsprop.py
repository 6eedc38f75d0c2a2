"""RMSprop with momentum and the centered variant (torch.optim.RMSprop).

Both variants stay tile-local: the centered form's running mean of g is one
more per-coordinate state, not a statistic over the tensor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import div, sqrt
from .base import Rule, StateSpec, _check_beta, _check_nonneg, register

MOMENTUM = 1
CENTERED = 2


@triton.jit
def rmsprop_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: lr, weight_decay, alpha, 1-alpha, eps, momentum
    # slots: s0 square_avg, s1 momentum_buffer, s2 grad_avg
    g = g + h[1] * w
    s0 = h[2] * s0 + h[3] * (g * g)
    if VARIANT & 2:
        s2 = s2 + h[3] * (g - s2)
        # Clamped: quantized states can make the variance estimate dip below 0.
        avg = sqrt(tl.maximum(s0 - s2 * s2, 0.0)) + h[4]
    else:
        avg = sqrt(s0) + h[4]
    if VARIANT & 1:
        s1 = h[5] * s1 + div(g, avg)
        w = w - h[0] * s1
    else:
        w = w - h[0] * div(g, avg)
    return w, s0, s1, s2


@register
class RMSprop(Rule):
    name = "rmsprop"
    defaults = dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False)
    hyper_names = ("lr", "weight_decay", "alpha", "one_minus_alpha", "eps", "momentum")
    triton_update = rmsprop_update
    zero_stays_zero = True
    torch_equivalent = torch.optim.RMSprop

    def validate(self, group: Mapping[str, Any]) -> None:
        super().validate(group)
        _check_beta("alpha", group["alpha"])
        _check_nonneg("momentum", group["momentum"])

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        specs = (StateSpec("square_avg", 0, nonnegative=True),)
        if group["momentum"] > 0:
            specs += (StateSpec("momentum_buffer", 1),)
        if group["centered"]:
            specs += (StateSpec("grad_avg", 2),)
        return specs

    def variant(self, group: Mapping[str, Any]) -> int:
        return (MOMENTUM if group["momentum"] > 0 else 0) | (CENTERED if group["centered"] else 0)

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        alpha = group["alpha"]
        return [group["lr"], group["weight_decay"], alpha, 1.0 - alpha, group["eps"], group["momentum"]]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        lr, wd, alpha, oma, eps, momentum = h
        g = g + wd * w
        s[0].mul_(alpha).add_(oma * (g * g))
        if variant & CENTERED:
            s[2].add_(oma * (g - s[2]))
            avg = (s[0] - s[2] * s[2]).clamp_(min=0).sqrt() + eps
        else:
            avg = s[0].sqrt() + eps
        if variant & MOMENTUM:
            s[1].mul_(momentum).add_(g / avg)
            w.sub_(lr * s[1])
        else:
            w.sub_(lr * (g / avg))
