"""The fused linear: an ``autograd.Function`` and the thin modules around it.

``ForgeLinearFunction`` computes ``y = x W^T + b`` like ``F.linear``. Its
backward computes dX = dY W from the pre-update weight first, then hands
(dY, X) to the engine, which steps W (and the bias, seen as an (out, 1)
weight) in place: no weight gradient is ever returned or stored.

The Function takes the ``nn.Parameter`` itself as an input. A trainable
parameter requires grad, so the backward runs even when the layer's input
does not (first layer, frozen embeddings); returning ``None`` for it means
``param.grad`` is never written.

``ForgeLinear`` is ``nn.Linear`` with that forward; ``patch()`` turns an
``nn.Linear`` (or HF GPT-2's ``Conv1D``, whose weight is stored (in, out)) into
one by swapping its class, as ``torch.nn.utils.parametrize`` does, so the
module object, its parameters, hooks and state-dict keys stay the same.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..engine import ForgeEngine, ManagedWeight


@dataclass(eq=False)
class FusedSite:
    """What one fused call needs in its backward.

    weight: the engine handle of the (2-D) weight this call reads.
    bias: the handle of its bias, or ``None`` (no bias, or a bias left to the fallback optimizer).
    index: for a 3-D expert parameter, which expert this call reads (``param[index]``).
    grad_node: the parameter's ``AccumulateGrad`` node (``accumulate_grad_node``), held so it
        stays the one autograd uses: a backward that will not run it asks for other gradients.
    bias_grad_node: the same for the fused bias.
    """

    engine: ForgeEngine
    weight: ManagedWeight
    bias: ManagedWeight | None = None
    index: int | None = None
    grad_node: Any = field(default=None, repr=False)
    bias_grad_node: Any = field(default=None, repr=False)

    def weight_of(self, param: torch.Tensor) -> torch.Tensor:
        return param if self.index is None else param[self.index]

    def steps_in_this_backward(self, bias: bool = False) -> bool:
        """Whether the running backward wants this weight's gradient (with ``bias``, its bias's):
        ``loss.backward()`` does; ``torch.autograd.grad(loss, x)`` and ``backward(inputs=[x])`` ask
        only for other gradients (input saliency, gradient penalties), and must not step it."""
        node = self.bias_grad_node if bias else self.grad_node
        if node is None:
            return True
        try:
            return torch._C._will_engine_execute_node(node)
        except RuntimeError as e:  # the parameter is an input of torch.autograd.grad
            raise RuntimeError(
                f"{(self.bias if bias else self.weight).name}: torch.autograd.grad with respect to a FORGE-fused "
                "parameter, which has no gradient (it is stepped inside backward): exclude its layer from "
                "patch() (exclude=[...])"
            ) from e


def accumulate_grad_node(param: torch.Tensor) -> Any:
    """The ``AccumulateGrad`` node of a leaf parameter that requires grad."""
    with torch.enable_grad():
        return param.view_as(param).grad_fn.next_functions[0][0]


def _autocast_dtype(x: torch.Tensor) -> torch.dtype | None:
    """The dtype autocast would run a linear in on ``x``'s device, or ``None`` when it is off."""
    kind = x.device.type
    if not torch.is_autocast_enabled(kind):
        return None
    dtype = torch.get_autocast_dtype(kind)
    if dtype == torch.float16:
        raise RuntimeError(
            "FORGE-fused layers do not support float16 autocast: fp16 needs a GradScaler, whose skipped steps "
            "cannot be honoured once earlier layers have stepped inside backward. "
            "Use torch.autocast(..., dtype=torch.bfloat16)"
        )
    return dtype


class ForgeLinearFunction(torch.autograd.Function):
    """``F.linear`` whose backward steps the weight (and bias) through ``site.engine``."""

    @staticmethod
    def forward(ctx: Any, input: torch.Tensor, param: torch.Tensor, bias: torch.Tensor | None,
                site: FusedSite) -> torch.Tensor:
        weight = site.weight_of(param)
        dtype = _autocast_dtype(input)
        if dtype is not None:  # what autocast does to F.linear: every operand in the low precision
            input, weight = input.to(dtype), weight.to(dtype)
            bias = bias.to(dtype) if bias is not None else None
        out = F.linear(input, weight.t() if site.weight.transposed else weight, bias)
        # The parameter, not a copy: backward reads it for dX before stepping it.
        ctx.save_for_backward(input, param)
        ctx.site = site
        return out

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        # The autograd engine enables grad mode in a backward only for create_graph=True. Refused
        # here, before any write, rather than through ``once_differentiable``'s wrapper, whose
        # context managers cost host time in every backward of every fused layer.
        if torch.is_grad_enabled():
            raise RuntimeError(
                "backward(create_graph=True) through a FORGE-fused layer: its weight is stepped inside "
                "backward, so its gradient cannot be differentiated again; exclude the layer from patch() "
                "(exclude=[...]) or drop create_graph"
            )
        input, param = ctx.saved_tensors
        site: FusedSite = ctx.site
        # A parameter is stepped when this backward wants its gradient: not one frozen after patch()
        # (requires_grad off), which torch's optimizers skip too, having no gradient.
        steps = ctx.needs_input_grad[1] and site.steps_in_this_backward()
        grad_input = grad_bias = None
        if ctx.needs_input_grad[0]:
            weight = site.weight_of(param)
            if weight.dtype != grad_output.dtype:  # fp32 weights under bf16 autocast
                weight = weight.to(grad_output.dtype)
            grad_input = grad_output @ (weight if not site.weight.transposed else weight.t())
        if site.bias is not None:
            if ctx.needs_input_grad[2] and site.steps_in_this_backward(bias=True):
                site.engine.bias_backward(site.bias, grad_output)
        elif ctx.needs_input_grad[2]:
            grad_bias = grad_output.reshape(-1, grad_output.shape[-1]).sum(0)
        if steps:
            site.engine.backward(site.weight, grad_output, input)  # dX above used the pre-update weight
        return grad_input, None, grad_bias, None


def check_site(site: FusedSite, param: torch.Tensor) -> None:
    """Raise if ``param`` no longer lives where the engine updates it (moved or cast after patching)."""
    handle = site.weight
    if handle.param is not param or handle.weight.untyped_storage().data_ptr() != param.untyped_storage().data_ptr():
        raise RuntimeError(
            f"{handle.name}: the parameter was replaced or moved after forge_mcore.patch() "
            "(model.to(), .cuda(), .bfloat16(), load_state_dict(assign=True)?); move and cast the model first, "
            "then call patch()"
        )


@torch.compiler.disable  # the engine's Python side effects must not be traced: fused layers stay eager
def forge_linear(input: torch.Tensor, param: torch.Tensor, bias: torch.Tensor | None, site: FusedSite) -> torch.Tensor:
    """Functional form: ``F.linear(input, site.weight_of(param), bias)`` with the fused backward."""
    check_site(site, param)
    return ForgeLinearFunction.apply(input, param, bias, site)


class _FusedLinearMixin:
    """The forward shared by ``ForgeLinear`` and the fused ``Conv1D``: plain until ``patch()`` binds a site."""

    _forge_site: FusedSite | None = None

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        site = self._forge_site
        if site is None or not torch.is_grad_enabled():
            return super().forward(input)
        # (a weight frozen after patch() beside a fused bias that still trains: the bias is the engine's to step)
        if not self.weight.requires_grad and not (site.bias is not None and self.bias.requires_grad):
            return super().forward(input)
        return forge_linear(input, self.weight, self.bias, site)


class ForgeLinear(_FusedLinearMixin, nn.Linear):
    """Drop-in ``nn.Linear`` (same constructor, parameters and state-dict keys).

    It behaves exactly as ``nn.Linear`` until ``forge_mcore.patch()`` binds it
    to an engine; from then on its backward steps ``weight`` and ``bias``
    in place and leaves their ``.grad`` unset.
    """


@functools.cache
def fused_class(cls: type[nn.Module]) -> type[nn.Module]:
    """The fused counterpart of a supported linear class (``nn.Linear`` or HF ``Conv1D``)."""
    if issubclass(cls, _FusedLinearMixin):
        return cls
    if cls is nn.Linear:
        return ForgeLinear
    return type(f"Forge{cls.__name__}", (_FusedLinearMixin, cls), {"__module__": __name__})
