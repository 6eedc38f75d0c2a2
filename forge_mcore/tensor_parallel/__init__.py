"""FORGE inside megatron-core: column- and row-parallel linears (TP, sequence
parallelism, experts), layer specs, and a megatron optimizer for the fused weights.

How a layer finds its engine
----------------------------
1. The model is built from a FORGE spec (``get_forge_gpt_decoder_block_spec`` /
   ``forge_spec``; ``use_forge_output_layer`` for ``GPTModel.output_layer``).
   Each ``ForgeColumnParallelLinear`` / ``ForgeRowParallelLinear`` is the stock
   layer with ``requires_grad=False`` on its weight and bias -- what megatron's
   DDP, ``get_megatron_optimizer`` and ``finalize_model_grads`` skip on -- so no
   ``main_grad``, no grad-buffer slot, no megatron param group.
2. After the model is final (Float16Module, DDP, devices),
   ``get_megatron_optimizer_with_forge`` (or ``ForgeMegatronOptimizer``) checks
   the setup, walks the model chunks, allocates each fused weight's state in
   one ``ForgeEngine`` and calls ``layer.forge_bind(ForgeBinding(engine, ...))``.
3. In backward each layer computes dX from the pre-update weight, launches its
   TP all-reduce / SP reduce-scatter, then calls ``engine.backward(handle, dY, X)``;
   ``optimizer.step()`` (megatron's ``ChainedOptimizer``) finishes the iteration
   and ``OptimizerParamScheduler`` edits the engine's groups like any other.

A layer that is not bound raises at its first forward with gradients enabled.
Transformer Engine specs are out of scope; grouped-GEMM experts need TE or
grouped_gemm and are refused (FORGE steps ``SequentialMLP`` experts).
"""

from .arguments import add_forge_args, forge_config_from_args
from .config import ForgeMegatronConfig, check_forge_setup
from .layers import ForgeBinding, ForgeColumnParallelLinear, ForgeParallelLinear, ForgeRowParallelLinear
from .norm import SequenceParallelTorchNorm
from .optimizer import (
    ForgeChainedOptimizer,
    ForgeMegatronOptimizer,
    chain_forge_optimizer,
    forge_layers,
    get_megatron_optimizer_with_forge,
)
from .specs import forge_spec, get_forge_gpt_decoder_block_spec, get_forge_gpt_layer_local_spec, use_forge_output_layer

__all__ = [
    "ForgeBinding", "ForgeChainedOptimizer", "ForgeColumnParallelLinear", "ForgeMegatronConfig",
    "ForgeMegatronOptimizer",
    "ForgeParallelLinear", "ForgeRowParallelLinear", "SequenceParallelTorchNorm", "add_forge_args",
    "chain_forge_optimizer", "check_forge_setup", "forge_config_from_args", "forge_layers", "forge_spec",
    "get_forge_gpt_decoder_block_spec", "get_forge_gpt_layer_local_spec", "get_megatron_optimizer_with_forge",
    "use_forge_output_layer",
]
