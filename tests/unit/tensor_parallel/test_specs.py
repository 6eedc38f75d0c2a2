"""Layer specs: which modules become FORGE's, and the SP-capable norm."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear
from megatron.core.transformer.torch_norm import WrappedTorchNorm
from megatron.core.transformer.transformer_config import TransformerConfig

from forge_mcore.tensor_parallel import (
    ForgeColumnParallelLinear,
    ForgeRowParallelLinear,
    SequenceParallelTorchNorm,
    forge_spec,
    get_forge_gpt_layer_local_spec,
)


def _linears(layer_spec):
    attention = layer_spec.submodules.self_attention.submodules
    mlp = layer_spec.submodules.mlp.submodules
    return attention, mlp


def test_dense_spec_swaps_the_four_linears_and_the_norms():
    spec = get_forge_gpt_layer_local_spec()
    attention, mlp = _linears(spec)
    assert (attention.linear_qkv, attention.linear_proj) == (ForgeColumnParallelLinear, ForgeRowParallelLinear)
    assert (mlp.linear_fc1, mlp.linear_fc2) == (ForgeColumnParallelLinear, ForgeRowParallelLinear)
    norms = [spec.submodules.input_layernorm, spec.submodules.pre_mlp_layernorm, attention.q_layernorm,
             attention.k_layernorm]
    assert all(n is SequenceParallelTorchNorm for n in norms)
    # megatron's spec is left as it was
    stock_attention, stock_mlp = _linears(get_gpt_layer_local_spec(qk_layernorm=True, normalization="RMSNorm"))
    assert (stock_attention.linear_qkv, stock_mlp.linear_fc2) == (ColumnParallelLinear, RowParallelLinear)
    assert get_gpt_layer_local_spec(qk_layernorm=True, normalization="RMSNorm").submodules.input_layernorm \
        is WrappedTorchNorm


def test_moe_spec_scopes_experts_and_dense_separately():
    spec = get_forge_gpt_layer_local_spec(num_experts=8, dense=False)
    attention, moe = _linears(spec)
    experts = moe.experts.submodules
    assert (experts.linear_fc1, experts.linear_fc2) == (ForgeColumnParallelLinear, ForgeRowParallelLinear)
    assert (attention.linear_qkv, moe.shared_experts.submodules.linear_fc1) == (ColumnParallelLinear,
                                                                                ColumnParallelLinear)
    stock = forge_spec(get_gpt_layer_local_spec(num_experts=8, normalization="RMSNorm"), dense=False, experts=False)
    attention, moe = _linears(stock)
    assert (attention.linear_qkv, moe.experts.submodules.linear_fc1) == (ColumnParallelLinear, ColumnParallelLinear)
    assert stock.submodules.input_layernorm is SequenceParallelTorchNorm


def test_sequence_parallel_norm_marks_its_weights_for_the_tp_reduction():
    config = TransformerConfig(num_layers=1, hidden_size=16, num_attention_heads=2, normalization="RMSNorm",
                               sequence_parallel=True, tensor_model_parallel_size=2, activation_func=F.silu)
    norm = SequenceParallelTorchNorm(config, 16, eps=1e-6)
    assert isinstance(norm, torch.nn.RMSNorm) and norm.weight.sequence_parallel
    assert config.sequence_parallel  # the caller's config is untouched
