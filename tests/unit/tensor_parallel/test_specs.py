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


def test_decoder_block_spec_scopes_dense_and_expert_linears_separately():
    from megatron.core.transformer.transformer_config import TransformerConfig as Config

    from forge_mcore.tensor_parallel import get_forge_gpt_decoder_block_spec

    config = Config(num_layers=2, hidden_size=16, num_attention_heads=2, normalization="RMSNorm",
                    activation_func=F.silu, num_moe_experts=4, moe_ffn_hidden_size=16, moe_router_topk=2,
                    moe_layer_freq=[0, 1])  # a dense layer, then a MoE layer
    forge = (ForgeColumnParallelLinear, ForgeRowParallelLinear)
    stock = (ColumnParallelLinear, RowParallelLinear)
    for dense, experts in ((False, True), (True, False)):
        block = get_forge_gpt_decoder_block_spec(config, dense=dense, experts=experts, pp_rank=0, vp_stage=0)
        dense_layer, moe_layer = (layer.submodules for layer in block.layer_specs)
        mlp, moe_experts = dense_layer.mlp.submodules, moe_layer.mlp.submodules.experts.submodules
        assert (mlp.linear_fc1, mlp.linear_fc2) == (forge if dense else stock)
        assert (moe_layer.self_attention.submodules.linear_qkv, moe_layer.self_attention.submodules.linear_proj) \
            == (forge if dense else stock)
        assert (moe_experts.linear_fc1, moe_experts.linear_fc2) == (forge if experts else stock)
        assert block.layer_norm is SequenceParallelTorchNorm


def test_a_module_spec_nested_inside_the_experts_counts_as_expert():
    from megatron.core.transformer.mlp import MLPSubmodules
    from megatron.core.transformer.moe.experts import SequentialMLP
    from megatron.core.transformer.spec_utils import ModuleSpec

    experts = ModuleSpec(module=SequentialMLP, submodules=MLPSubmodules(
        linear_fc1=ModuleSpec(module=ColumnParallelLinear), linear_fc2=RowParallelLinear))
    for dense, fused in ((False, True), (True, False)):
        converted = forge_spec(experts, dense=dense, experts=fused).submodules
        assert converted.linear_fc1.module is (ForgeColumnParallelLinear if fused else ColumnParallelLinear)
        assert converted.linear_fc2 is (ForgeRowParallelLinear if fused else RowParallelLinear)
