"""Adagrad with lr decay and an initial accumulator value (torch.optim.Adagrad)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from ..kernels.tl_bits import div, sqrt
from .base import Rule, StateSpec, _check_nonneg, register


@triton.jit
def adagrad_update(g, w, s0, s1, s2, h, VARIANT: tl.constexpr):
    # h: clr = lr / (1 + (step - 1) * lr_decay), weight_decay, eps
    g = g + h[1] * w
    s0 = s0 + g * g
    w = w - h[0] * div(g, sqrt(s0) + h[2])
    return w, s0, s1, s2


@register
class Adagrad(Rule):
    name = "adagrad"
    defaults = dict(lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10)
    hyper_names = ("clr", "weight_decay", "eps")
    triton_update = adagrad_update
    zero_stays_zero = True
    torch_equivalent = torch.optim.Adagrad

    def validate(self, group: Mapping[str, Any]) -> None:
        super().validate(group)
        _check_nonneg("lr_decay", group["lr_decay"])
        _check_nonneg("initial_accumulator_value", group["initial_accumulator_value"])

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        return (StateSpec("sum", 0, nonnegative=True, init=float(group["initial_accumulator_value"])),)

    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        return [group["lr"] / (1.0 + (step - 1) * group["lr_decay"]), group["weight_decay"], group["eps"]]

    def reference_update(self, g: torch.Tensor, w: torch.Tensor, s: list[torch.Tensor | None], h: list[float],
                         variant: int) -> None:
        clr, wd, eps = h
        g = g + wd * w
        s[0].add_(g * g)
        w.sub_(clr * (g / (s[0].sqrt() + eps)))
