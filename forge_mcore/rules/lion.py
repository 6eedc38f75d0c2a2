"""Lion (Chen et al. 2023): sign of an interpolated momentum, decoupled weight decay.

No torch.optim twin; the reference below follows the paper's Algorithm 2
(as in lucidrains/lion-pytorch): c = beta1 m + (1-beta1) g, w -= lr sign(c),
m = beta2 m + (1-beta2) g.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from .base import Rule, StateSpec, register


@triton.jit
def lion_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: lr, decay = 1 - lr * weight_decay, beta1, 1-beta1, beta2, 1-beta2
    c = h[2] * s0 + h[3] * g
    # lr * sign(c) as lr with c's sign bit, 0 where c is (torch.sign(0) = 0): one bitwise op and
    # one select instead of two of each (the same bits: lr * +-1 is exact)
    signed_lr = (h[0].to(tl.uint32, bitcast=True) | (c.to(tl.uint32, bitcast=True) & 0x80000000)).to(
        tl.float32, bitcast=True)
    w = w * h[1] - tl.where(c == 0.0, 0.0, signed_lr)
    s0 = h[4] * s0 + h[5] * g
    return w, s0, s1, s2


@register
class Lion(Rule):
    name = "lion"
    defaults = dict(lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0)
    hyper_names = ("lr", "decay", "beta1", "one_minus_beta1", "beta2", "one_minus_beta2")
    triton_update = lion_update
    zero_stays_zero = True

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("exp_avg", 0),)

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        return [lr, 1.0 - lr * group["weight_decay"], beta1, 1.0 - beta1, beta2, 1.0 - beta2]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        lr, decay, beta1, omb1, beta2, omb2 = h
        c = beta1 * s[0] + omb1 * g
        w.mul_(decay).sub_(lr * torch.sign(c))
        s[0].mul_(beta2).add_(omb2 * g)
