"""FORGE column- and row-parallel linears: megatron-core's layers with the weight
gradient consumed by the fused optimizer step inside backward.

Both classes are the stock megatron-core 0.16.1 layers (same constructor, same
``forward``, same initialization and state dict) with ``_forward_impl`` routed
through ``_ForgeLinearFunction``. Its backward keeps megatron's order: gather
the sequence-parallel input (async), dX = dY W from the pre-update weight,
launch the dX all-reduce (TP) or reduce-scatter (SP) async, then run the fused
step on (dY, X) while that collective is in flight. A TP or SP shard holds
its weight block's complete gradient (paper App. A.3, Prop. 2(i)), so the
kernel runs unchanged on every rank; so does an expert, whose routed tokens
all reach its rank.

Weights (and biases) get ``requires_grad=False`` at construction: that is what
megatron's DDP (grad buffers, hooks), ``get_megatron_optimizer`` (param
groups) and ``finalize_model_grads`` key on, so they never see them. The
layers find their engine through ``forge_bind()``, which the FORGE megatron
optimizer calls when it is built (see ``forge_mcore.tensor_parallel``).

A bias is stepped as an (out, 1) weight. The stock ``forward`` reads
``self.bias`` to add it or to return it (``skip_bias_add``); during a FORGE
forward it reads a copy whose gradient feeds that step instead. Under
sequence parallelism a row-parallel bias is added to the sequence shard, so
its gradient is partial across TP and is all-reduced before it is stepped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from megatron.core.parallel_state import get_global_memory_buffer
from megatron.core.tensor_parallel.layers import (
    ColumnParallelLinear,
    RowParallelLinear,
    custom_bwd,
    custom_fwd,
    dist_all_gather_func,
    dist_reduce_scatter_func,
)

from ..engine import ForgeEngine, ManagedWeight

# A leaf that requires grad, passed to every FORGE Function so its backward runs
# even when the layer's input does not require grad (first layer, frozen embedding).
# Not a Parameter: no optimizer, DDP or state dict ever sees it.
_GRAD_ANCHOR = torch.empty(0, requires_grad=True)


@dataclass(eq=False)
class ForgeBinding:
    """What a FORGE layer's backward needs: the engine and its handles.

    bias_reduce_group: the TP group for a row-parallel bias under sequence
        parallelism (its gradient is a partial sum over the sequence shards), else None.
    """

    engine: ForgeEngine
    weight: ManagedWeight
    bias: ManagedWeight | None = None
    bias_reduce_group: dist.ProcessGroup | None = None


def _gather_sequence(input: torch.Tensor, group: dist.ProcessGroup, async_op: bool = False):
    """All-gather the sequence-parallel input along dim 0 into megatron's shared buffer."""
    size = list(input.size())
    size[0] *= group.size()
    buffer = get_global_memory_buffer().get_tensor(size, input.dtype, "mpu")
    handle = dist_all_gather_func(buffer, input, group=group, async_op=async_op)
    return buffer, handle


class _ForgeLinearFunction(torch.autograd.Function):
    """Y = X W^T; backward returns dX and hands (dY, X) to the fused step."""

    @staticmethod
    @custom_fwd
    def forward(ctx: Any, input: torch.Tensor, anchor: torch.Tensor, weight: torch.Tensor,
                binding: ForgeBinding | None, allreduce_dgrad: bool, sequence_parallel: bool,
                tp_group: dist.ProcessGroup | None) -> torch.Tensor:
        ctx.save_for_backward(input, weight)
        ctx.binding = binding
        ctx.allreduce_dgrad = allreduce_dgrad
        ctx.sequence_parallel = sequence_parallel
        ctx.tp_group = tp_group
        total_input = _gather_sequence(input, tp_group)[0] if sequence_parallel else input
        return torch.matmul(total_input, weight.t())

    @staticmethod
    @custom_bwd
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        input, weight = ctx.saved_tensors
        binding: ForgeBinding | None = ctx.binding
        if binding is None:
            raise RuntimeError("a FORGE linear ran backward without an engine: build the FORGE optimizer first")
        gather = None
        total_input = input
        if ctx.sequence_parallel:
            total_input, gather = _gather_sequence(input, ctx.tp_group, async_op=True)
        grad_input = grad_output.matmul(weight) if ctx.needs_input_grad[0] else None
        if gather is not None:
            gather.wait()
        comm = None
        if grad_input is not None and ctx.allreduce_dgrad:
            comm = dist.all_reduce(grad_input, group=ctx.tp_group, async_op=True)
        elif grad_input is not None and ctx.sequence_parallel:
            shard = torch.empty(input.shape, dtype=grad_input.dtype, device=grad_input.device)
            comm = dist_reduce_scatter_func(shard, grad_input, group=ctx.tp_group, async_op=True)
            grad_input = shard
        # The collective above is in flight while the fused kernel runs.
        binding.engine.backward(binding.weight, grad_output, total_input)
        if comm is not None:
            comm.wait()
        return grad_input, None, None, None, None, None, None


class _ForgeBiasProxy(torch.autograd.Function):
    """A copy of the bias for the stock forward to add or return; its gradient
    (summed over tokens by autograd's broadcast) feeds the bias's fused step."""

    @staticmethod
    def forward(ctx: Any, anchor: torch.Tensor, bias: torch.Tensor, binding: ForgeBinding) -> torch.Tensor:
        ctx.binding = binding
        return bias.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, None]:
        binding: ForgeBinding = ctx.binding
        grad = grad.float()
        if binding.bias_reduce_group is not None:
            dist.all_reduce(grad, group=binding.bias_reduce_group)
        binding.engine.bias_backward(binding.bias, grad.view(1, -1))
        return None, None, None


class ForgeParallelLinear:
    """What the two FORGE linears share (mixed in before the stock class)."""

    forge_binding: ForgeBinding | None

    def _setup_forge(self) -> None:
        name = type(self).__name__
        if self.weight is None:
            raise ValueError(
                f"{name}: no weight of its own (skip_weight_param_allocation=True, a tied output layer). "
                "A weight read by the embedding and by the output layer in one step cannot be fused: build "
                "the model with share_embeddings_and_output_weights=False (--untie-embeddings-and-output-weights) "
                "or keep the stock ColumnParallelLinear for this layer"
            )
        if self.config.defer_embedding_wgrad_compute:
            raise ValueError(
                f"{name}: defer_embedding_wgrad_compute=True keeps the output layer's dY for a later weight "
                "gradient, but FORGE consumes it inside backward: turn off --defer-embedding-wgrad-compute"
            )
        for param in (self.weight, self.bias):
            if param is not None and hasattr(param, "main_grad"):
                raise ValueError(f"{name}: its parameters already have a slot in megatron's DDP grad buffers: "
                                 "convert the layer before wrapping the model in DistributedDataParallel")
        for param in (self.weight, self.bias):
            if param is not None:
                param.requires_grad_(False)  # leaves DDP buffers, megatron's param groups, finalize_model_grads
        self.forge_binding = None

    @classmethod
    def from_stock(cls, layer: torch.nn.Module) -> "ForgeParallelLinear":
        """The FORGE twin of an already built stock layer, sharing its parameters
        (same initialization, nothing copied): e.g. ``GPTModel.output_layer``."""
        stock = next(base for base in cls.__bases__ if issubclass(base, torch.nn.Module))
        if type(layer) is not stock:
            raise TypeError(f"{cls.__name__}.from_stock needs a {stock.__name__}, got {type(layer).__name__}")
        forge = cls.__new__(cls)
        forge.__dict__.update(layer.__dict__)
        forge._setup_forge()
        return forge

    def forge_bind(self, binding: ForgeBinding) -> None:
        """Attach the engine and handles (called by the FORGE optimizer when it is built)."""
        if binding.weight.param is not self.weight or (binding.bias is None) != (self.bias is None):
            raise ValueError(f"{type(self).__name__}: the binding's handles are not this layer's parameters")
        self.forge_binding = binding

    def _forge_forward(self, forward: Callable[..., Any], *args: Any) -> Any:
        """Run the stock ``forward`` with ``self.bias`` read as the FORGE proxy."""
        binding = self.forge_binding
        if torch.is_grad_enabled():
            if binding is None:
                raise RuntimeError(
                    f"{type(self).__name__} is not bound to a FORGE engine: build the optimizer with "
                    "get_megatron_optimizer_with_forge(...) (after Float16Module/DDP wrapping) before training"
                )
            if binding.weight.weight.data_ptr() != self.weight.data_ptr():
                raise RuntimeError(
                    f"{binding.weight.name}: the weight's storage changed after the FORGE optimizer was built "
                    "(the model was moved or cast afterwards): build the optimizer last"
                )
        if self.bias is None or binding is None:
            return forward(*args)
        bias = self._parameters["bias"]
        self._parameters["bias"] = _ForgeBiasProxy.apply(_GRAD_ANCHOR, bias, binding)
        try:
            return forward(*args)
        finally:
            self._parameters["bias"] = bias

    def _forward_impl(self, input, weight, *, bias=None, allreduce_dgrad=False, sequence_parallel=False,
                      tp_group=None, **unused):
        # `unused`: gradient_accumulation_fusion and the deferred-wgrad buffers (refused at construction).
        if weight is not self.weight:
            raise ValueError(f"{type(self).__name__} steps its own weight: a weight passed to forward() "
                             "cannot be fused")
        output = _ForgeLinearFunction.apply(input, _GRAD_ANCHOR, weight, self.forge_binding, allreduce_dgrad,
                                            sequence_parallel, tp_group)
        return output if bias is None else output + bias

    def backward_dw(self) -> None:
        """Nothing is deferred: the weight gradient was consumed by the fused step in backward."""


class ForgeColumnParallelLinear(ForgeParallelLinear, ColumnParallelLinear):
    """``ColumnParallelLinear`` (same constructor) whose weight and bias are stepped by FORGE."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._setup_forge()

    def forward(self, input_: torch.Tensor, weight: torch.Tensor | None = None,
                runtime_gather_output: bool | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self._forge_forward(super().forward, input_, weight, runtime_gather_output)


class ForgeRowParallelLinear(ForgeParallelLinear, RowParallelLinear):
    """``RowParallelLinear`` (same constructor) whose weight and bias are stepped by FORGE."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._setup_forge()

    def forward(self, input_: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self._forge_forward(super().forward, input_)
