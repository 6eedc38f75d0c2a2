"""Mixture-of-experts weights stored as 3-D parameters (HF ``@use_experts_implementation`` classes).

Transformers stores the experts of Qwen3-MoE (and its relatives) as two fused
parameters, ``gate_up_proj`` (E, 2I, H) and ``down_proj`` (E, H, I), read with
``F.linear(x, param[e])``; no ``nn.Linear`` swap reaches them (paper App. P,
I.1: 3-4% coverage until they were handled). The fused forward below routes
tokens as the eager implementation does and runs ``ForgeLinearFunction`` per
hit expert on ``param[e]``, so expert e is stepped from dY_e^T X_e over its own
routed tokens. Experts that receive no token are registered with
``step_when_unused``: the engine applies the gradient-free part of the rule
(decay, moment decay) at ``step()``, as an optimizer given a zero gradient
would (paper Remark 1).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from .linear import FusedSite, forge_linear

EXPERT_PARAMS = ("gate_up_proj", "down_proj")


def is_fusable_experts(module: nn.Module) -> bool:
    """An HF experts module with the layout the fused forward reproduces: concatenated or
    interleaved gate/up (``_apply_gate`` knows which), no biases, weights stored (E, out, in)."""
    params = [getattr(module, name, None) for name in EXPERT_PARAMS]
    return (
        all(isinstance(p, nn.Parameter) and p.dim() == 3 for p in params)
        and getattr(module, "has_gate", False) is True
        and getattr(module, "has_bias", True) is False
        and getattr(module, "is_transposed", True) is False
        and callable(getattr(module, "_apply_gate", None))
        and params[0].shape[0] == params[1].shape[0] == getattr(module, "num_experts", -1)
    )


class _FusedExpertsMixin:
    """Fused forward for an HF experts module; plain (the class's own dispatch) until bound."""

    _forge_sites: dict[str, list[FusedSite]] | None = None

    def forward(self, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                top_k_weights: torch.Tensor) -> torch.Tensor:
        sites = self._forge_sites
        if sites is None or not torch.is_grad_enabled():
            return super().forward(hidden_states, top_k_index, top_k_weights)
        final = torch.zeros_like(hidden_states)
        with torch.no_grad():
            expert_mask = nn.functional.one_hot(top_k_index, num_classes=self.num_experts).permute(2, 1, 0)
            hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero().flatten().tolist()
        for e in hit:
            top_k_pos, token_idx = torch.where(expert_mask[e])
            h = forge_linear(hidden_states[token_idx], self.gate_up_proj, None, sites["gate_up_proj"][e])
            h = forge_linear(self._apply_gate(h), self.down_proj, None, sites["down_proj"][e])
            h = h * top_k_weights[token_idx, top_k_pos, None]
            final.index_add_(0, token_idx, h.to(final.dtype))
        return final


@functools.cache
def fused_experts_class(cls: type[nn.Module]) -> type[nn.Module]:
    """The fused counterpart of an HF experts class (a subclass, so ``isinstance`` still holds)."""
    if issubclass(cls, _FusedExpertsMixin):
        return cls
    return type(f"Forge{cls.__name__}", (_FusedExpertsMixin, cls), {"__module__": __name__})
