"""Shared pieces of the megatron-core CPU scenarios (run inside spawned ranks)."""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from megatron.core import parallel_state
from megatron.core.transformer.module import MegatronModule
from megatron.core.transformer.transformer_config import TransformerConfig

from forge_mcore.tensor_parallel import add_forge_args

from .ranks import COLLECTIVE_TIMEOUT_MINUTES

HIDDEN, FFN, SEQ, BATCH, VOCAB = 32, 64, 8, 2, 64


def init_parallel(tp: int = 1, ep: int = 1, cp: int = 1, pp: int = 1) -> None:
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=tp, context_parallel_size=cp, expert_model_parallel_size=ep,
        pipeline_model_parallel_size=pp, distributed_timeout_minutes=COLLECTIVE_TIMEOUT_MINUTES,
    )


def transformer_config(**overrides) -> TransformerConfig:
    """A tiny Qwen3-shaped config (RMSNorm, qk-norm, SwiGLU, no biases, no dropout) for CPU runs."""
    tp = parallel_state.get_tensor_model_parallel_world_size()
    pp = parallel_state.get_pipeline_model_parallel_world_size()
    kwargs = dict(
        num_layers=2, hidden_size=HIDDEN, ffn_hidden_size=FFN, num_attention_heads=4, num_query_groups=2,
        kv_channels=8, normalization="RMSNorm", qk_layernorm=True, gated_linear_unit=True,
        activation_func=F.silu, add_bias_linear=False, hidden_dropout=0.0, attention_dropout=0.0,
        bias_activation_fusion=False, bias_dropout_fusion=False, apply_rope_fusion=False,
        masked_softmax_fusion=False, persist_layer_norm=False, use_cpu_initialization=True,
        tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp, init_method_std=0.05,
    )
    if pp > 1:
        kwargs.update(pipeline_dtype=torch.float32, batch_p2p_comm=False)
    kwargs.update(overrides)
    return TransformerConfig(**kwargs)


class Container(MegatronModule):
    """A megatron module around arbitrary submodules (so get_model_config finds the config)."""

    def __init__(self, config: TransformerConfig, **modules: torch.nn.Module) -> None:
        super().__init__(config)
        for name, module in modules.items():
            self.add_module(name, module)


def tp_rank_slice(full: torch.Tensor, dim: int) -> torch.Tensor:
    """This TP rank's shard of a tensor replicated on every rank."""
    tp, rank = parallel_state.get_tensor_model_parallel_world_size(), parallel_state.get_tensor_model_parallel_rank()
    return full.chunk(tp, dim=dim)[rank]


def build_gpt(config: TransformerConfig, forge: bool, *, seed: int = 1234, dense: bool = True, experts: bool = True):
    """A tiny untied GPT from the local spec (this rank's pipeline stage), wrapped in megatron's
    DDP: FORGE linears (and output layer) when ``forge``, else the stock linears (with SP-capable norms)."""
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt.gpt_model import GPTModel

    from forge_mcore.tensor_parallel import get_forge_gpt_decoder_block_spec, use_forge_output_layer

    torch.manual_seed(seed)
    spec = get_forge_gpt_decoder_block_spec(config, dense=forge and dense, experts=forge and experts)
    model = GPTModel(config, spec, vocab_size=VOCAB, max_sequence_length=SEQ, position_embedding_type="rope",
                     share_embeddings_and_output_weights=False,
                     pre_process=parallel_state.is_pipeline_first_stage(),
                     post_process=parallel_state.is_pipeline_last_stage())
    if forge and dense:
        use_forge_output_layer(model)
    return DistributedDataParallel(config, DistributedDataParallelConfig(), model)


def gpt_batch(step: int) -> dict:
    gen = torch.Generator().manual_seed(10_000 + step)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=gen)
    position_ids = torch.arange(SEQ).expand(BATCH, SEQ)
    return dict(input_ids=tokens[:, :-1], position_ids=position_ids, attention_mask=None, labels=tokens[:, 1:])


def train_step(model, optimizer, scheduler, step: int, micro_batches: int = 1) -> tuple[float, float]:
    """One megatron-core training iteration over ``gpt_batch(step)`` split into ``micro_batches``
    along the batch, each loss divided by their count (as megatron's schedules do): (loss, grad norm)."""
    from megatron.core.distributed import finalize_model_grads

    model.zero_grad_buffer()
    optimizer.zero_grad()
    batch, loss = gpt_batch(step), 0.0
    for part in range(micro_batches):
        micro = {k: None if v is None else v.chunk(micro_batches)[part] for k, v in batch.items()}
        micro_loss = model(**micro).float().mean() / micro_batches
        micro_loss.backward()
        loss += micro_loss.item()
    finalize_model_grads([model])
    ok, grad_norm, _ = optimizer.step()
    assert ok
    if scheduler is not None:
        scheduler.step(1)
    return loss, grad_norm


def param_scheduler(optimizer):
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

    return OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=0.02, min_lr=0.002, lr_warmup_steps=2, lr_decay_steps=8,
        lr_decay_style="cosine", start_wd=0.1, end_wd=0.1, wd_incr_steps=8, wd_incr_style="constant",
    )


def megatron_args(*argv: str, **overrides) -> argparse.Namespace:
    """``add_forge_args``' flags parsed from ``argv``, beside the megatron arguments that
    ``forge_config_from_args`` reads (a bf16 run at TP 2, one micro-batch per step; ``overrides``)."""
    args = add_forge_args(argparse.ArgumentParser()).parse_args(list(argv))
    defaults = dict(fp16=False, bf16=True, loss_scale=None, clip_grad=0.0, data_parallel_size=1,
                    context_parallel_size=1, tensor_model_parallel_size=2, pipeline_model_parallel_size=1,
                    expert_model_parallel_size=1, expert_tensor_parallel_size=None, world_size=2, num_experts=None,
                    global_batch_size=4, micro_batch_size=4, delay_wgrad_compute=False,
                    calculate_per_token_loss=False)
    vars(args).update({**defaults, **overrides})
    return args
