"""Every setup FORGE cannot run exactly is refused before anything is written,
with a message naming what to change."""

from __future__ import annotations

import argparse

import pytest
import torch
from megatron.core.distributed import DistributedDataParallelConfig
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.optimizer import OptimizerConfig
from megatron.core.transformer.spec_utils import ModuleSpec

from forge_mcore.tensor_parallel import (
    ForgeColumnParallelLinear,
    ForgeMegatronConfig,
    ForgeMegatronOptimizer,
    ForgeRowParallelLinear,
    add_forge_args,
    forge_config_from_args,
    forge_layers,
    forge_spec,
    get_forge_gpt_layer_local_spec,
    use_forge_output_layer,
)

from .common import (
    FFN,
    HIDDEN,
    SEQ,
    VOCAB,
    Container,
    build_gpt,
    gpt_batch,
    init_parallel,
    megatron_args,
    transformer_config,
)
from .ranks import on_ranks


def _forge_mlp(config) -> Container:
    init = torch.nn.init.xavier_normal_
    return Container(config, fc1=ForgeColumnParallelLinear(HIDDEN, FFN, config=config, init_method=init, bias=True),
                     fc2=ForgeRowParallelLinear(FFN, HIDDEN, config=config, init_method=init, bias=True,
                                                input_is_parallel=True, skip_bias_add=False))


def _refused(build, match: str, model=None) -> None:
    """``build()`` raises ValueError matching ``match``; ``model``'s FORGE layers stay unbound and unchanged."""
    before = [p.clone() for p in model.parameters()] if model is not None else []
    with pytest.raises(ValueError, match=match):
        build()
    if model is not None:
        assert all(layer.forge_binding is None for _, layer in forge_layers([model])), "a layer was bound"
        assert all(torch.equal(a, b) for a, b in zip(before, model.parameters())), "a weight was written"


def _optimizer_config(**overrides) -> OptimizerConfig:
    return OptimizerConfig(**{**dict(optimizer="adam", lr=1e-3, clip_grad=0.0), **overrides})


@on_ranks(1)
def refusals_single_rank(rank, world_size):
    init_parallel()
    config = transformer_config()
    mlp = _forge_mlp(config)
    build = lambda oc=None, fc=None, **kw: ForgeMegatronOptimizer(oc or _optimizer_config(), [mlp], fc, **kw)
    _refused(lambda: build(num_microbatches=2), r"2 micro-batches per step.*--global-batch-size", mlp)
    _refused(lambda: build(_optimizer_config(clip_grad=1.0)), r"clip_grad=1.0.*--forge-clip exact", mlp)
    _refused(lambda: build(_optimizer_config(fp16=True)), r"--fp16", mlp)
    _refused(lambda: build(_optimizer_config(bf16=True, loss_scale=1024.0)), r"--loss-scale", mlp)
    _refused(lambda: build(fc=ForgeMegatronConfig(dense=False)), r"ForgeMegatronConfig.dense=False", mlp)

    config.calculate_per_token_loss = True
    _refused(lambda: build(), r"--calculate-per-token-loss", mlp)
    config.calculate_per_token_loss = False

    mlp.ddp_config = DistributedDataParallelConfig(delay_wgrad_compute=True)
    _refused(lambda: build(), r"--delay-wgrad-compute", mlp)
    del mlp.ddp_config
    config.delay_wgrad_compute = True  # (megatron itself only accepts it with MoE overlap)
    _refused(lambda: build(), r"--delay-wgrad-compute", mlp)
    config.delay_wgrad_compute = False

    # a tied output layer, handed over either way
    _refused(lambda: ForgeColumnParallelLinear(HIDDEN, VOCAB, config=config, init_method=torch.nn.init.zeros_,
                                               bias=False, skip_weight_param_allocation=True),
             r"tied output layer.*--untie-embeddings-and-output-weights")
    tied = GPTModel(config, get_gpt_layer_local_spec(qk_layernorm=True, normalization="RMSNorm"), vocab_size=VOCAB,
                    max_sequence_length=SEQ, share_embeddings_and_output_weights=True)
    _refused(lambda: use_forge_output_layer(tied), r"share_embeddings_and_output_weights=False")
    wrapped = build_gpt(config, forge=False)  # converting after DDP gave the weight a grad-buffer slot
    _refused(lambda: use_forge_output_layer(wrapped.module), r"before wrapping the model")

    # an unbound layer refuses to train; a bound one refuses a foreign weight
    x = torch.randn(SEQ, 2, HIDDEN, requires_grad=True)
    with pytest.raises(RuntimeError, match="not bound to a FORGE engine"):
        mlp.fc1(x)
    with torch.no_grad():
        mlp.fc1(x)  # inference needs no engine
    ForgeMegatronOptimizer(_optimizer_config(), [mlp])
    with pytest.raises(ValueError, match="steps its own weight"):
        mlp.fc1(x, weight=mlp.fc1.weight.detach().clone())
    mlp.fc1.weight.data = mlp.fc1.weight.data.clone()  # as if the model were moved after the optimizer was built
    with pytest.raises(RuntimeError, match="storage changed"):
        mlp.fc1(x)

    # megatron-core without Megatron-LM has no micro-batch calculator: a second micro-batch is
    # refused at its backward, in megatron's terms
    model = build_gpt(config, forge=True)
    ForgeMegatronOptimizer(_optimizer_config(), [model])
    model(**gpt_batch(0)).float().mean().backward()
    with pytest.raises(RuntimeError, match=r"num_microbatches=1 .*--forge-clip exact.*_with_forge"):
        model(**gpt_batch(1)).float().mean().backward()


@on_ranks(2)
def refusals_data_and_context_parallel(rank, world_size):
    init_parallel(tp=1)  # data-parallel size 2
    config = transformer_config()
    model = build_gpt(config, forge=True)
    _refused(lambda: ForgeMegatronOptimizer(_optimizer_config(), [model]), r"data-parallel size 2.*--forge-scope",
             model)

    moe = transformer_config(num_moe_experts=4, moe_ffn_hidden_size=FFN, moe_router_topk=2)
    experts_only = build_gpt(moe, forge=True, dense=False)  # expert data-parallel size 2 at EP=1
    _refused(lambda: ForgeMegatronOptimizer(_optimizer_config(), [experts_only]),
             r"expert data-parallel size 2.*--expert-model-parallel-size", experts_only)

    from megatron.core import parallel_state

    parallel_state.destroy_model_parallel()
    init_parallel(tp=1, cp=2)
    mlp = _forge_mlp(transformer_config(context_parallel_size=2))
    _refused(lambda: ForgeMegatronOptimizer(_optimizer_config(), [mlp]), r"context-parallel size 2", mlp)


def test_refusals_on_one_rank(rank_results):
    rank_results(refusals_single_rank)


def test_refusals_of_data_and_context_parallelism(rank_results):
    rank_results(refusals_data_and_context_parallel)


def test_spec_refuses_grouped_gemm_and_transformer_engine():
    with pytest.raises(ValueError, match="moe_grouped_gemm=False"):
        get_forge_gpt_layer_local_spec(num_experts=4, moe_grouped_gemm=True)
    te_linear = type("TELayerNormColumnParallelLinear", (torch.nn.Module,),
                     {"__module__": "megatron.core.extensions.transformer_engine"})
    with pytest.raises(ValueError, match="Transformer Engine specs are out of scope"):
        forge_spec(ModuleSpec(module=te_linear))


def test_args_build_the_config_and_refuse_up_front():
    parser = add_forge_args(argparse.ArgumentParser())
    args = parser.parse_args(["--forge-optimizer", "SGD", "--forge-state-dtype", "int8", "--forge-clip", "previous",
                              "--forge-scope", "experts"])
    assert (args.forge_optimizer, args.forge_state_dtype, args.forge_clip) == ("sgd", "int8", "previous")
    with pytest.raises(SystemExit):
        parser.parse_args(["--forge-optimizer", "nonesuch"])
    config = forge_config_from_args(megatron_args(forge_optimizer="lion", forge_clip="exact", clip_grad=1.0))
    assert (config.optimizer, config.clip, config.dense, config.experts) == ("lion", "exact", True, True)
    for overrides, match in [
        (dict(global_batch_size=8), r"2 micro-batches"),
        (dict(clip_grad=1.0), r"--forge-clip"),
        (dict(fp16=True, bf16=False), r"--fp16"),
        (dict(data_parallel_size=2, world_size=4), r"data-parallel size 2"),
        (dict(context_parallel_size=2, world_size=4), r"context-parallel size 2"),
        (dict(num_experts=8, expert_model_parallel_size=1, forge_scope="experts", world_size=4, data_parallel_size=2,
              global_batch_size=8), r"expert data-parallel size 2"),
        (dict(delay_wgrad_compute=True), r"--delay-wgrad-compute"),
        (dict(calculate_per_token_loss=True), r"--calculate-per-token-loss"),
    ]:
        with pytest.raises(ValueError, match=match):
            forge_config_from_args(megatron_args(**overrides))
    # experts only at EP = world size: dense data parallelism stays with megatron
    forge_config_from_args(megatron_args(num_experts=8, expert_model_parallel_size=4, forge_scope="experts",
                                          world_size=4, tensor_model_parallel_size=1, data_parallel_size=4,
                                          global_batch_size=16))
    with pytest.raises(ValueError, match="choose one of"):
        ForgeMegatronConfig(clip="sometimes")
