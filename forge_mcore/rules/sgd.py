"""SGD with weight decay, momentum, dampening and Nesterov (torch.optim.SGD)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from .base import Rule, StateSpec, _check_nonneg, register

MOMENTUM = 1
NESTEROV = 2


@triton.jit
def sgd_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: lr, weight_decay, buf_decay, buf_grad_coef, momentum
    lr = h[0]
    g = g + h[1] * w
    if VARIANT & 1:
        # First step: buf_decay = 0, buf_grad_coef = 1, so the buffer becomes g
        # (torch clones the first gradient rather than dampening it).
        s0 = h[2] * s0 + h[3] * g
        if VARIANT & 2:
            g = g + h[4] * s0
        else:
            g = s0
    w = w - lr * g
    return w, s0, s1, s2


@register
class SGD(Rule):
    name = "sgd"
    defaults = dict(lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)
    hyper_names = ("lr", "weight_decay", "buf_decay", "buf_grad_coef", "momentum")
    triton_update = sgd_update
    zero_stays_zero = True
    torch_equivalent = torch.optim.SGD

    def validate(self, group: Mapping[str, Any]) -> None:
        super().validate(group)
        _check_nonneg("momentum", group["momentum"])
        _check_nonneg("dampening", group["dampening"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("nesterov=True needs momentum > 0 and dampening = 0 (as torch.optim.SGD)")

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("momentum_buffer", 0),) if group["momentum"] != 0 else ()

    def variant(self, group: Mapping[str, Any]) -> int:
        return (MOMENTUM if group["momentum"] != 0 else 0) | (NESTEROV if group["nesterov"] else 0)

    def affine_in_grad(self, group: Mapping[str, Any]) -> bool:
        return True

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        first = step == 1
        return [
            group["lr"],
            group["weight_decay"],
            0.0 if first else group["momentum"],
            1.0 if first else 1.0 - group["dampening"],
            group["momentum"],
        ]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        lr, wd, buf_decay, buf_coef, momentum = h
        g = g + wd * w
        if variant & MOMENTUM:
            s[0].mul_(buf_decay).add_(buf_coef * g)
            g = g + momentum * s[0] if variant & NESTEROV else s[0]
        w.sub_(lr * g)
