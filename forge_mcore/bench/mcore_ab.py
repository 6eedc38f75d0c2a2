"""FORGE spec vs stock spec inside megatron-core: the GPU acceptance cells of issue 5.

Every cell builds a Qwen3-shaped GPT from megatron-core's local spec twice in
one process, from the same initial weights, in the same recipe:

* stock: ``get_forge_gpt_decoder_block_spec(config, dense=False, experts=False)``
  (megatron's linears; the norms made sequence-parallel capable) stepped by
  ``get_megatron_optimizer``;
* FORGE: the FORGE linears and output layer, ``get_megatron_optimizer_with_forge``.

Both are wrapped as Megatron-LM wraps a model (Float16Module for bf16, then
megatron's DDP), finalized by ``finalize_model_grads`` and scheduled by
``OptimizerParamScheduler``. Recipes (paper App. K): ``bf16-state`` = bf16 weights
and bf16 moments (stock: torch fused AdamW on the bf16 parameters);
``fp32-master`` = megatron's ``--bf16`` mixed precision (fp32 master and moments,
fp32 gradient reduction); ``fp32`` = everything fp32 (an exactness gate). Cells:

* ``tp1`` (one GPU), ``tp2`` and ``tp2-sp`` (two GPUs): 20 steps, max |delta loss|
  (gate 4e-4, paper N.2: 1.5-3.8e-4), and each arm's mean distance to an all-fp32
  reference trained from the same weights (paper N.2's reference mode; a row
  without a gate); the fused weights must be absent from
  megatron's DDP grad buffers and optimizer (asserted when the arm is built,
  reported as a row after training, with both arms' DDP buffer sizes).
* ``ep2`` (two GPUs): a MoE GPT (8 experts per layer, SequentialMLP) with
  deterministic round-robin routing by sequence position; FORGE experts at EP=2
  (dense weights stock) vs an all-local reference (stock, EP=1: every expert on every
  rank) and vs stock at EP=2, in the fp32, fp32-master and bf16-state recipes, then a
  short run of FORGE experts with the learned top-k router. The EP=1 reference on two
  ranks sums two per-rank expert gradients where EP=2 forms one over all routed
  tokens, which in the mixed recipes moves stock itself by ~1e-4 from it. With
  ``--ep-local DIR`` the cell also compares with the one-rank references below.
* ``ep-local`` (one GPU): the same MoE GPT at EP=1 on one rank, trained on both
  data-parallel ranks' batches as two micro-batches, stock and with FORGE experts, from
  one initial state (saved with the losses under ``--out`` for ``--ep-local``): every
  expert local, its update formed over all its tokens as at EP=2 (FORGE's exact fp32
  accumulation across the two), and each dense weight's gradient rounded per rank's
  batch as EP=2's data-parallel reduction sums them. The gate (1e-4; paper gate EP1
  3.6e-5) applies to FORGE at EP=2 vs this one-rank FORGE reference when it is given,
  else to FORGE vs the two-rank EP=1 reference.
* ``memory`` (two GPUs): a parameter-dominated cell (micro-batch 1, sequence 512,
  TP=2): peak memory (``max_memory_allocated`` over ``--timed-steps`` steps after
  ``--warmup``), stock first, then FORGE built beside it, each peak counted above
  what was allocated before its arm was built (reported as ``baseline_bytes``);
  then the median step time of both arms alternating step by step. Gates:
  stock peak - FORGE peak >= 80% of the fused weights' gradient bytes (as the
  stock arm stores them), step time <= 1.05x stock. Counting above the baseline
  means neither memory an earlier cell left behind nor the stock arm itself
  counts against FORGE.

The whole GPU run is one device call: ``bash scripts/device/mcore.sh`` on two
GPUs (carry ``.whl`` from ``shared/device/wheels.sh mcore``). It runs, with
``CUDA_DEVICE_MAX_CONNECTIONS=1``:

    CUDA_VISIBLE_DEVICES=0 torchrun --standalone --nproc-per-node 1 -m forge_mcore.bench.mcore_ab \
        --cells ep-local,tp1 --resume --out $OUT/mcore_tp1 &                         # beside the next one
    torchrun --standalone --nproc-per-node 2 -m forge_mcore.bench.mcore_ab --cells tp2,tp2-sp \
        --resume --out $OUT/mcore_tp2
    wait; torchrun --standalone --nproc-per-node 2 -m forge_mcore.bench.mcore_ab --cells ep2 \
        --ep-local $OUT/mcore_tp1 --resume --out $OUT/mcore_tp2
    torchrun --standalone --nproc-per-node 2 -m forge_mcore.bench.mcore_ab --cells memory \
        --resume --out $OUT/mcore_tp2                                               # alone: it is timed

    torchrun --nproc-per-node 2 -m forge_mcore.bench.mcore_ab --smoke --out /tmp/mcore_smoke   # CPU, gloo

``--smoke`` runs every cell the world size allows at toy shapes on the CPU
(gloo, ``megatron_on_cpu``); its numbers mean nothing. Results: ``results.json``
(every step's loss, every measurement, the cells attempted) and ``summary.csv``
under ``--out``, rewritten before and after each cell; the table is printed
last. A cell that raises is recorded as an ``error`` row before the process
exits. A cell that exceeds ``--cell-timeout`` seconds dumps every thread's
stack and exits (torchrun then stops the other ranks); collectives time out
after ``--timeout-minutes``. ``--resume`` keeps an earlier run's rows in
``--out`` and skips the cells it attempted (one that was killed gets an
``unfinished`` row), so a relaunch after a failure runs only what is left.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import faulthandler
import gc
import json
import math
import os
import statistics
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from megatron.core import parallel_state
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.optimizer import ChainedOptimizer, OptimizerConfig, get_megatron_optimizer
from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler
from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear, model_parallel_cuda_manual_seed
from megatron.core.transformer.module import Float16Module
from megatron.core.transformer.moe.router import TopKRouter
from megatron.core.transformer.transformer_config import TransformerConfig

from forge_mcore import ops
from forge_mcore.bench.common import environment, write_json
from forge_mcore.tensor_parallel import (
    ForgeMegatronConfig,
    forge_layers,
    get_forge_gpt_decoder_block_spec,
    get_megatron_optimizer_with_forge,
    use_forge_output_layer,
)
from forge_mcore.tensor_parallel.testing import megatron_on_cpu

CELLS = ("tp1", "ep-local", "tp2", "tp2-sp", "ep2", "memory")
RECIPES = ("bf16-state", "fp32-master", "fp32")
LOSS_GATE, EP_GATE, MEMORY_FRACTION_GATE, STEP_TIME_GATE = 4e-4, 1e-4, 0.8, 1.05


@dataclass(frozen=True)
class Shape:
    """A Qwen3-shaped GPT (RMSNorm, qk-norm, SwiGLU, GQA, no biases, untied output layer)."""

    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    seq: int
    micro_batch: int
    experts: int | None = None
    moe_ffn: int | None = None
    topk: int = 2


# Qwen3-0.6B's layer shape (4 of its 28 layers), the 8B's for the memory cell, a small MoE.
# The loss cells take paper N.2's batch (sequence 1024, micro-batch 4: 4096 tokens per step);
# session 3 measured max |delta loss| 5.0-6.8e-4 at sequence 512, micro-batch 2.
LOSS_SHAPE = Shape(layers=4, hidden=1024, ffn=3072, heads=16, kv_heads=8, head_dim=128, vocab=151936, seq=1024,
                   micro_batch=4)
MEMORY_SHAPE = Shape(layers=24, hidden=4096, ffn=12288, heads=32, kv_heads=8, head_dim=128, vocab=151936, seq=512,
                     micro_batch=1)
MOE_SHAPE = replace(LOSS_SHAPE, experts=8, moe_ffn=768)
SMOKE_SHAPE = Shape(layers=2, hidden=64, ffn=128, heads=4, kv_heads=2, head_dim=16, vocab=256, seq=16, micro_batch=2)


@dataclass(frozen=True)
class Recipe:
    params_dtype: torch.dtype
    mixed_precision: bool  # megatron's --bf16 optimizer: fp32 master and moments, fp32 grad reduction


RECIPE = {
    "bf16-state": Recipe(torch.bfloat16, False),
    "fp32-master": Recipe(torch.bfloat16, True),
    "fp32": Recipe(torch.float32, False),
}


# ---------------------------------------------------------------------------
# building the arms
# ---------------------------------------------------------------------------

def transformer_config(shape: Shape, recipe: Recipe, *, tp: int = 1, ep: int = 1, sp: bool = False,
                       cpu: bool = False) -> TransformerConfig:
    bf16 = recipe.params_dtype == torch.bfloat16
    # megatron's all-to-all dispatcher needs CUDA streams: the CPU smoke run all-gathers instead
    moe = dict(num_moe_experts=shape.experts, moe_ffn_hidden_size=shape.moe_ffn, moe_router_topk=shape.topk,
               moe_token_dispatcher_type="allgather" if cpu else "alltoall",
               expert_model_parallel_size=ep) if shape.experts else {}
    return TransformerConfig(
        num_layers=shape.layers, hidden_size=shape.hidden, ffn_hidden_size=shape.ffn,
        num_attention_heads=shape.heads, num_query_groups=shape.kv_heads, kv_channels=shape.head_dim,
        normalization="RMSNorm", layernorm_epsilon=1e-6, qk_layernorm=True, gated_linear_unit=True,
        activation_func=F.silu, add_bias_linear=False, hidden_dropout=0.0, attention_dropout=0.0,
        bias_activation_fusion=False, bias_dropout_fusion=False, apply_rope_fusion=False,
        masked_softmax_fusion=False, persist_layer_norm=False, init_method_std=0.02,
        tensor_model_parallel_size=tp, sequence_parallel=sp, bf16=bf16, params_dtype=recipe.params_dtype,
        pipeline_dtype=recipe.params_dtype, use_cpu_initialization=cpu, **moe,
    )


@dataclass
class Arm:
    name: str
    model: Any  # megatron DDP
    optimizer: Any  # megatron ChainedOptimizer
    scheduler: Any
    fused_params: list
    # The data-parallel ranks whose batches it trains on, one micro-batch each (None: its own
    # rank's batch). A one-rank reference of a data-parallel run trains (0,), (1,), ... so each
    # rank's gradient is rounded on its own, as the data-parallel run's reduction sums them.
    micro_batch_ranks: tuple[int, ...] | None = None


def build_model(config: TransformerConfig, shape: Shape, recipe: Recipe, forge: bool, *, dense: bool = True,
                experts: bool = True, init_state: dict | None = None, seed: int = 1234) -> DistributedDataParallel:
    """The GPT as Megatron-LM wraps it: built, (optionally) loaded, Float16Module, DDP."""
    torch.manual_seed(seed)
    model_parallel_cuda_manual_seed(seed)
    spec = get_forge_gpt_decoder_block_spec(config, dense=forge and dense, experts=forge and experts)
    model = GPTModel(config, spec, vocab_size=shape.vocab, max_sequence_length=shape.seq,
                     position_embedding_type="rope", rotary_base=1_000_000,
                     share_embeddings_and_output_weights=False)
    if forge and dense:
        use_forge_output_layer(model)
    if not config.use_cpu_initialization:
        # As Megatron-LM's get_model: parallel linears are born on the GPU, but the local
        # spec's torch norms (WrappedTorchNorm) are created on the CPU and moved here.
        model.cuda(torch.cuda.current_device())
    if init_state is not None:
        model.load_state_dict(init_state, strict=True)
    if config.bf16:
        model = Float16Module(config, model)
    ddp_config = DistributedDataParallelConfig(grad_reduce_in_fp32=recipe.mixed_precision)
    return DistributedDataParallel(config, ddp_config, model)


def _use_fused_adamw(chained, *, require_cuda: bool = True) -> None:
    """The stock optimizers' torch AdamW made the fused one (both arms; fairest baseline).

    torch reads ``fused``/``foreach`` from each param group at step time, and megatron's
    groups already carry ``fused=None`` from the unfused AdamW (a constructor's
    ``fused=True`` would only fill keys that are absent): set them on the groups."""
    for opt in chained.chained_optimizers:
        inner = getattr(opt, "optimizer", None)
        on_gpu = inner is not None and all(p.is_cuda for g in inner.param_groups for p in g["params"])
        if isinstance(inner, torch.optim.AdamW) and (on_gpu or not require_cuda):
            for group in inner.param_groups:
                group["fused"], group["foreach"] = True, None
            opt.optimizer = torch.optim.AdamW(inner.param_groups, fused=True)


def adamw_kinds(chained: ChainedOptimizer) -> list[str]:
    """How each torch AdamW in a chained optimizer steps ("fused", "foreach" or "default")."""
    kinds = []
    for opt in chained.chained_optimizers:
        inner = getattr(opt, "optimizer", None)
        if isinstance(inner, torch.optim.AdamW):
            kinds += ["fused" if g.get("fused") else "foreach" if g.get("foreach") else "default"
                      for g in inner.param_groups]
    return sorted(set(kinds))


def build_arm(name: str, config: TransformerConfig, shape: Shape, recipe: Recipe, forge: bool, *, lr: float, steps: int,
              dense: bool = True, experts: bool = True, init_state: dict | None = None) -> Arm:
    model = build_model(config, shape, recipe, forge, dense=dense, experts=experts, init_state=init_state)
    opt_config = OptimizerConfig(optimizer="adam", lr=lr, min_lr=lr / 10, weight_decay=0.1, adam_beta1=0.9,
                                 adam_beta2=0.95, adam_eps=1e-8, clip_grad=0.0, bf16=recipe.mixed_precision,
                                 params_dtype=recipe.params_dtype)
    if forge:
        optimizer = get_megatron_optimizer_with_forge(opt_config, [model], ForgeMegatronConfig(dense=dense,
                                                                                                 experts=experts))
    else:
        optimizer = get_megatron_optimizer(opt_config, [model])
    _use_fused_adamw(optimizer)
    scheduler = OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=lr, min_lr=lr / 10, lr_warmup_steps=max(1, steps // 4),
        lr_decay_steps=max(2, steps), lr_decay_style="cosine", start_wd=0.1, end_wd=0.1,
        wd_incr_steps=max(2, steps), wd_incr_style="constant",
    )
    fused = [p for _, layer in forge_layers([model]) for p in (layer.weight, layer.bias) if p is not None]
    arm = Arm(name, model, optimizer, scheduler, fused)
    if forge:
        assert_fused_weights_left_megatron(arm)
    return arm


def fused_weights_in_megatron(arm: Arm) -> list[torch.Tensor]:
    """The fused weights that still have a slot in megatron's DDP buckets, a ``main_grad``,
    ``requires_grad`` or a megatron param group (the FORGE arm's answer must be [])."""
    ddp = arm.model
    in_buckets = set(ddp.param_to_bucket_group)
    for buffer in ddp.buffers + ddp.expert_parallel_buffers:
        in_buckets.update(buffer.params)
    megatron = {id(p) for opt in arm.optimizer.chained_optimizers[:-1] for g in opt.param_groups for p in g["params"]}
    return [p for p in arm.fused_params
            if p in in_buckets or hasattr(p, "main_grad") or p.requires_grad or id(p) in megatron]


def assert_fused_weights_left_megatron(arm: Arm) -> None:
    """The fused weights have no slot in megatron's DDP buckets and no megatron param group."""
    if not arm.fused_params:
        raise AssertionError(f"{arm.name}: no fused weight found in the FORGE arm")
    left = fused_weights_in_megatron(arm)
    if left:
        raise AssertionError(f"{len(left)} fused weight(s), e.g. of shape {tuple(left[0].shape)}, are still in "
                             "megatron's DDP or optimizer")


def ddp_buffer_numel(arm: Arm) -> int:
    """Elements of the arm's megatron DDP gradient buffers (dense and expert-parallel)."""
    return sum(b.numel for b in arm.model.buffers + arm.model.expert_parallel_buffers)


def free(*arms: Arm) -> None:
    for arm in arms:
        arm.model = arm.optimizer = arm.scheduler = arm.fused_params = None
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def round_robin_routing(model: torch.nn.Module, experts: int, topk: int) -> None:
    """Replace every MoE router's routing by a deterministic round-robin over sequence
    positions: the token at position s goes to experts s, s+1, ..., s+k-1 (mod E) with
    weight 1/k, whatever its hidden state and whichever sequence of the batch it is in, so
    a one-rank run over both ranks' sequences routes every token as EP=2 does."""
    def routing(logits: torch.Tensor, padding_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        seq, batch = logits.shape[0], logits.shape[1]  # megatron's [s, b, E]; tokens flatten s-major
        position = torch.arange(seq, device=logits.device).repeat_interleave(batch)
        chosen = (position[:, None] + torch.arange(topk, device=logits.device)) % experts
        tokens = seq * batch
        routing_map = torch.zeros(tokens, experts, dtype=torch.bool, device=logits.device).scatter_(1, chosen, True)
        probs = torch.zeros(tokens, experts, dtype=logits.dtype, device=logits.device).scatter_(1, chosen, 1 / topk)
        return probs, routing_map

    for module in model.modules():
        if isinstance(module, TopKRouter):
            module.routing = routing


# ---------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------

def batch(shape: Shape, step: int, device: torch.device | str, dp_ranks: tuple[int, ...] | None = None) -> dict:
    """Learnable synthetic data, different per data-parallel rank: each sequence is an
    arithmetic progression mod 4096 with its own stride. ``dp_ranks``: the batches of those
    data-parallel ranks, concatenated (a one-rank run over what several ranks train on)."""
    starts, strides = [], []
    for rank in dp_ranks if dp_ranks is not None else (parallel_state.get_data_parallel_rank(),):
        gen = torch.Generator().manual_seed(1_000_003 * step + rank)
        starts.append(torch.randint(0, 4096, (shape.micro_batch, 1), generator=gen))
        strides.append(torch.randint(1, 64, (shape.micro_batch, 1), generator=gen))
    start, stride = torch.cat(starts), torch.cat(strides)
    tokens = ((start + stride * torch.arange(shape.seq + 1)) % min(4096, shape.vocab)).to(device)
    positions = torch.arange(shape.seq, device=device).expand(len(start), shape.seq)
    return dict(input_ids=tokens[:, :-1], position_ids=positions, attention_mask=None, labels=tokens[:, 1:])


def train_step(arm: Arm, shape: Shape, step: int, device: torch.device | str) -> float:
    arm.model.zero_grad_buffer()
    arm.optimizer.zero_grad()
    ranks = arm.micro_batch_ranks or (None,)
    loss = torch.zeros((), device=device)
    for rank in ranks:  # a rank's mean loss / micro-batches: the data-parallel average's gradient
        micro = arm.model(**batch(shape, step, device, None if rank is None else (rank,))).float().mean()
        (micro / len(ranks)).backward()
        loss += micro.detach() / len(ranks)
    finalize_model_grads([arm.model])
    ok, _, _ = arm.optimizer.step()
    if not ok:
        raise RuntimeError(f"{arm.name}: the optimizer skipped step {step}")
    arm.scheduler.step(1)
    # the loss the data-parallel group trains on (each rank saw its own batch)
    value = loss.clone()
    dist.all_reduce(value, group=parallel_state.get_data_parallel_group())
    return value.item() / parallel_state.get_data_parallel_world_size()


def train(arms: list[Arm], shape: Shape, steps: int, device: torch.device | str) -> dict[str, list[float]]:
    losses: dict[str, list[float]] = {arm.name: [] for arm in arms}
    for step in range(steps):
        for arm in arms:
            losses[arm.name].append(train_step(arm, shape, step, device))
    for name, values in losses.items():
        if not all(math.isfinite(v) for v in values):
            raise FloatingPointError(f"{name}: non-finite loss {values}")
    return losses


def max_gap(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b))


# ---------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------

@dataclass
class Context:
    args: argparse.Namespace
    device: Any
    cpu: bool
    loss_shape: Shape
    memory_shape: Shape
    moe_shape: Shape


def init_layout(ctx: Context, tp: int = 1, ep: int = 1) -> None:
    if parallel_state.model_parallel_is_initialized():
        parallel_state.destroy_model_parallel()
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp, expert_model_parallel_size=ep,
                                             distributed_timeout_minutes=ctx.args.timeout_minutes)


def cell_dense(ctx: Context, cell: str) -> list[dict]:
    """FORGE vs stock, same recipe, same initial weights: max |delta loss| over the steps."""
    tp, sp = (1, False) if cell == "tp1" else (2, cell == "tp2-sp")
    rows = []
    for recipe_name in ctx.args.recipes:
        init_layout(ctx, tp=tp)
        recipe = RECIPE[recipe_name]
        config = transformer_config(ctx.loss_shape, recipe, tp=tp, sp=sp, cpu=ctx.cpu)
        kw = dict(lr=ctx.args.lr, steps=ctx.args.steps)
        stock = build_arm("stock", config, ctx.loss_shape, recipe, False, **kw)
        init_state = _module_state(stock.model)
        forge = build_arm("forge", config, ctx.loss_shape, recipe, True, init_state=init_state, **kw)
        losses = train([stock, forge], ctx.loss_shape, ctx.args.steps, ctx.device)
        gap = max_gap(losses["stock"], losses["forge"])
        layout = f"TP={tp} SP={'on' if sp else 'off'}"
        fused_numel = sum(p.numel() for p in forge.fused_params)
        buffers = {a.name: ddp_buffer_numel(a) for a in (stock, forge)}
        rows.append(dict(cell=cell, recipe=recipe_name, layout=layout,
                         metric="max |dloss|", value=gap, gate=LOSS_GATE, passed=gap <= LOSS_GATE,
                         steps=ctx.args.steps, fused_params=fused_numel, ddp_buffer_numel=buffers,
                         adamw={a.name: adamw_kinds(a.optimizer) for a in (stock, forge)}, losses=losses))
        # checked after training too: nothing re-registered a fused weight with megatron
        left = fused_weights_in_megatron(forge)
        rows.append(dict(cell=cell, recipe=recipe_name, layout=layout, metric="fused weights in megatron DDP/opt",
                         value=f"{len(left)}/{len(forge.fused_params)}", gate=0, passed=not left,
                         fused_params=fused_numel, ddp_buffer_numel=buffers,
                         ddp_buffer_numel_drop=buffers["stock"] - buffers["forge"]))
        free(stock, forge)
        if ctx.args.fp32_reference and recipe_name != "fp32":
            rows.append(_drift_from_fp32(ctx, cell, recipe_name, layout, tp, sp, init_state, losses))
    return rows


def _drift_from_fp32(ctx: Context, cell: str, recipe_name: str, layout: str, tp: int, sp: bool,
                     init_state: dict, losses: dict[str, list[float]]) -> dict:
    """Paper N.2's reference mode: the same model, weights and data trained all-fp32 (stock
    spec); each arm's mean |loss - reference| says which is closer to fp32 truth, where the
    arms' A/B gap alone cannot (their bf16 noise differs by construction: stock rounds the
    weight gradient to bf16 before the update, FORGE keeps it in fp32 registers)."""
    config = transformer_config(ctx.loss_shape, RECIPE["fp32"], tp=tp, sp=sp, cpu=ctx.cpu)
    reference = build_arm("fp32-reference", config, ctx.loss_shape, RECIPE["fp32"], False,
                          init_state=init_state, lr=ctx.args.lr, steps=ctx.args.steps)
    ref = train([reference], ctx.loss_shape, ctx.args.steps, ctx.device)["fp32-reference"]
    free(reference)
    drift = {arm: statistics.fmean(abs(x - y) for x, y in zip(losses[arm], ref)) for arm in ("stock", "forge")}
    return dict(cell=cell, recipe=recipe_name, layout=layout, metric="mean |loss - fp32 reference| stock/FORGE",
                value=f"{drift['stock']:.3g}/{drift['forge']:.3g}", gate="", passed="",
                drift=drift, reference_losses=ref)


def _module_state(ddp) -> dict:
    """A CPU copy of the unwrapped model's state dict (the initial weights of the other arms)."""
    module = ddp.module
    while hasattr(module, "module"):
        module = module.module
    return {k: v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else v
            for k, v in module.state_dict().items()}


def _expert_state_for_ep(full: dict, ep_rank: int, local_experts: int) -> dict:
    """The EP=1 state dict with each rank's experts renumbered to local indices."""
    state = {}
    for key, value in full.items():
        if ".local_experts." in key:
            head, tail = key.split(".local_experts.")
            index, rest = tail.split(".", 1)
            local = int(index) - ep_rank * local_experts
            if not 0 <= local < local_experts:
                continue
            key = f"{head}.local_experts.{local}.{rest}"
        state[key] = value
    return state


EP_LOCAL_STATE, EP_LOCAL_LOSSES = "ep_local_state.pt", "ep_local.json"


def cell_ep_local(ctx: Context) -> list[dict]:
    """The one-rank references of the ep2 cell: the MoE GPT at EP=1 on one rank, trained on
    both data-parallel ranks' batches (what EP=2 on two ranks trains on), one micro-batch
    each so the dense gradients round as the data-parallel run's do, stock and with
    FORGE experts, from one initial state. A FORGE reference with every expert local needs
    one rank: at two, EP=1 makes the experts data parallel, which FORGE refuses until the
    coordinator. Writes ``ep_local_state.pt`` (the initial states) and ``ep_local.json``
    (the losses) under ``--out`` for ``--ep-local`` of the two-rank ep2 cell."""
    if dist.get_world_size() != 1:
        raise ValueError(f"the ep-local cell runs on 1 rank, got {dist.get_world_size()}")
    shape, rows, states, losses = ctx.moe_shape, [], {}, {}
    kw = dict(lr=ctx.args.lr, steps=ctx.args.steps)
    for recipe_name in ctx.args.ep_recipes:
        recipe = RECIPE[recipe_name]
        init_layout(ctx, ep=1)
        config = transformer_config(shape, recipe, ep=1, cpu=ctx.cpu)
        stock = build_arm("local-stock", config, shape, recipe, False, **kw)
        states[recipe_name] = _module_state(stock.model)
        forge = build_arm("local-forge", config, shape, recipe, True, dense=False, init_state=states[recipe_name],
                          **kw)
        for arm in (stock, forge):
            arm.micro_batch_ranks = (0, 1)
            round_robin_routing(arm.model, shape.experts, shape.topk)
        # FORGE experts sum the two micro-batches exactly (the engine's fp32 accumulator, then
        # the fused step on the last); megatron's schedules get that mode in [train], so it is
        # set on the engine here rather than through ForgeMegatronConfig.
        forge.optimizer.chained_optimizers[-1].engine.grad_accumulation = len(forge.micro_batch_ranks)
        losses[recipe_name] = train([stock, forge], shape, ctx.args.steps, ctx.device)
        free(stock, forge)
        rows.append(dict(cell="ep-local", recipe=recipe_name,
                         layout="EP=1 on one rank, each rank's batch a micro-batch",
                         metric="max |dloss| FORGE vs stock", value=max_gap(*losses[recipe_name].values()),
                         gate=None, passed=None, losses=losses[recipe_name]))
    os.makedirs(ctx.args.out, exist_ok=True)
    torch.save(states, os.path.join(ctx.args.out, EP_LOCAL_STATE))
    write_json(os.path.join(ctx.args.out, EP_LOCAL_LOSSES), losses)
    return rows


def cell_ep2(ctx: Context) -> list[dict]:
    """FORGE experts at EP=2 (dense stock, data parallel) vs an all-local stock reference at
    EP=1 on the same two ranks and, with ``--ep-local``, vs the one-rank stock and FORGE
    references of the ep-local cell (the gated comparison then: FORGE vs FORGE)."""
    world = dist.get_world_size()
    if world != 2:
        raise ValueError(f"the ep2 cell needs 2 ranks, got {world}")
    shape, rows = ctx.moe_shape, []
    kw = dict(lr=ctx.args.lr, steps=ctx.args.steps)
    local_states, local_losses = {}, {}
    if ctx.args.ep_local:
        local_states = torch.load(os.path.join(ctx.args.ep_local, EP_LOCAL_STATE))
        with open(os.path.join(ctx.args.ep_local, EP_LOCAL_LOSSES)) as f:
            local_losses = json.load(f)
        missing = [r for r in ctx.args.ep_recipes if r not in local_states or r not in local_losses]
        if missing:
            raise ValueError(f"--ep-local {ctx.args.ep_local} has no one-rank reference for {missing}: run the "
                             "ep-local cell with the same --ep-recipes first")
    for recipe_name in ctx.args.ep_recipes:
        recipe = RECIPE[recipe_name]
        init_layout(ctx, ep=1)
        reference = build_arm("reference", transformer_config(shape, recipe, ep=1, cpu=ctx.cpu), shape, recipe,
                              False, init_state=local_states.get(recipe_name), **kw)
        round_robin_routing(reference.model, shape.experts, shape.topk)
        full_state = _module_state(reference.model)
        losses = train([reference], shape, ctx.args.steps, ctx.device)
        free(reference)

        init_layout(ctx, ep=2)
        config = transformer_config(shape, recipe, ep=2, cpu=ctx.cpu)
        local_state = _expert_state_for_ep(full_state, parallel_state.get_expert_model_parallel_rank(),
                                           shape.experts // 2)
        stock = build_arm("stock", config, shape, recipe, False, init_state=local_state, **kw)
        forge = build_arm("forge", config, shape, recipe, True, dense=False, init_state=local_state, **kw)
        for arm in (stock, forge):
            round_robin_routing(arm.model, shape.experts, shape.topk)
        losses.update(train([stock, forge], shape, ctx.args.steps, ctx.device))
        left = fused_weights_in_megatron(forge)
        buffers = {a.name: ddp_buffer_numel(a) for a in (stock, forge)}
        rows.append(dict(cell="ep2", recipe=recipe_name, layout="EP=2 FORGE experts",
                         metric="fused weights in megatron DDP/opt", value=f"{len(left)}/{len(forge.fused_params)}",
                         gate=0, passed=not left, fused_params=sum(p.numel() for p in forge.fused_params),
                         ddp_buffer_numel=buffers, ddp_buffer_numel_drop=buffers["stock"] - buffers["forge"]))
        free(stock, forge)
        local = local_losses.get(recipe_name, {})
        every = {**losses, **local}
        comparisons = [(other, "reference", "EP=1 reference") for other in ("forge", "stock")]
        comparisons += [(other, f"local-{other}", f"one-rank {other} reference") for other in ("forge", "stock")
                        if local]
        gated_reference = "local-forge" if local else "reference"  # the gate is on FORGE only
        for other, ref, what in comparisons:
            gated = other == "forge" and ref == gated_reference
            gap = max_gap(every[ref], every[other])
            rows.append(dict(cell="ep2", recipe=recipe_name, layout=f"EP=2 {other} vs {what}",
                             metric="max |dloss|", value=gap, gate=EP_GATE if gated else None,
                             passed=gap <= EP_GATE if gated else None, losses=every))

    # learned top-k routing: FORGE experts train (experts no token reaches still decay)
    recipe_name = ctx.args.ep_recipes[-1]
    recipe = RECIPE[recipe_name]
    init_layout(ctx, ep=2)
    learned = build_arm("forge-learned", transformer_config(shape, recipe, ep=2, cpu=ctx.cpu), shape, recipe, True,
                        dense=False, lr=ctx.args.lr, steps=ctx.args.learned_steps)
    curve = train([learned], shape, ctx.args.learned_steps, ctx.device)["forge-learned"]
    free(learned)
    k = max(1, len(curve) // 4)
    first, last = statistics.mean(curve[:k]), statistics.mean(curve[-k:])
    rows.append(dict(cell="ep2", recipe=recipe_name, layout="EP=2 FORGE experts with learned top-k",
                     metric="loss first->last quarter", value=f"{first:.4f}->{last:.4f}", gate=None,
                     passed=last < first, losses={"forge-learned": curve}))
    return rows


def cell_memory(ctx: Context) -> list[dict]:
    """Peak memory and step time, stock then FORGE, in this process."""
    if dist.get_world_size() != 2:
        raise ValueError(f"the memory cell runs at TP=2 and needs 2 ranks, got {dist.get_world_size()}")
    shape, rows = ctx.memory_shape, []
    for recipe_name in ctx.args.recipes:
        recipe = RECIPE[recipe_name]
        init_layout(ctx, tp=2)
        config = transformer_config(shape, recipe, tp=2, cpu=ctx.cpu)
        measured, arms = {}, []
        fused_grad_bytes = 0
        tuned_before = set(ops.tuned_configs())
        for forge in (False, True):
            # what is allocated before the arm exists (earlier cells; for FORGE, the stock arm, kept
            # alive for the timing below): each peak is counted above it
            baseline = torch.cuda.memory_allocated() if torch.cuda.is_available() else 0
            arm = build_arm("forge" if forge else "stock", config, shape, recipe, forge, lr=ctx.args.lr,
                            steps=ctx.args.warmup + 2 * ctx.args.timed_steps)
            if not forge:  # gradient bytes of what FORGE fuses, as the stock arm's DDP buffers hold them
                grad_size = 4 if recipe.mixed_precision or recipe.params_dtype == torch.float32 else 2
                fused_grad_bytes = grad_size * _fusable_numel(arm.model)
            measured[arm.name] = dict(_peak(arm, shape, ctx, baseline), adamw=adamw_kinds(arm.optimizer),
                                      ddp_buffer_numel=ddp_buffer_numel(arm))
            arms.append(arm)
        for name, timing in _time_interleaved(arms, shape, ctx).items():
            measured[name].update(timing)
        # which kernel ran each fused shape (the persistent Gluon grid holds every SM, the Triton
        # grid does not: the step time depends on it); the tuner picks once per shape key
        kernels = Counter(cfg.kernel for key, cfg in ops.tuned_configs().items() if key not in tuned_before)
        free(*arms)
        stock, forge = measured["stock"], measured["forge"]
        layout = f"TP=2 mbs={shape.micro_batch} seq={shape.seq}"
        # Each arm's peak above what was allocated before it was built: equal to the raw
        # difference unless the stock arm left memory behind (baseline_bytes tells).
        saved = (stock["peak_bytes"] - stock["baseline_bytes"]) - (forge["peak_bytes"] - forge["baseline_bytes"])
        rows.append(dict(cell="memory", recipe=recipe_name, layout=layout, metric="peak GB stock/FORGE",
                         value=f"{stock['peak_gb']:.2f}/{forge['peak_gb']:.2f}", gate=MEMORY_FRACTION_GATE,
                         passed=saved >= MEMORY_FRACTION_GATE * fused_grad_bytes if not ctx.cpu else None,
                         saved_gb=saved / 2**30, saved_raw_gb=(stock["peak_bytes"] - forge["peak_bytes"]) / 2**30,
                         fused_grad_gb=fused_grad_bytes / 2**30,
                         saved_fraction=saved / fused_grad_bytes if fused_grad_bytes else None,
                         stock=stock, forge=forge))
        rows.append(dict(cell="memory", recipe=recipe_name, layout=layout, metric="saved / fused grad GB",
                         value=f"{saved / 2**30:.2f}/{fused_grad_bytes / 2**30:.2f}", gate=MEMORY_FRACTION_GATE,
                         passed=rows[-1]["passed"], baseline_gb={k: v["baseline_bytes"] / 2**30
                                                                 for k, v in measured.items()}))
        ratio = forge["step_ms"] / stock["step_ms"]
        rows.append(dict(cell="memory", recipe=recipe_name, layout=layout, metric="step ms stock/FORGE",
                         value=f"{stock['step_ms']:.1f}/{forge['step_ms']:.1f}", gate=STEP_TIME_GATE,
                         passed=ratio <= STEP_TIME_GATE if not ctx.cpu else None, ratio=ratio))
        rows.append(dict(cell="memory", recipe=recipe_name, layout=layout, metric="FORGE kernels (shape keys)",
                         value=" ".join(f"{k}:{n}" for k, n in sorted(kernels.items())) or "torch backend",
                         gate=None, passed=None, forge_gluon=ops.gluon_enabled()))
    return rows


def _fusable_numel(ddp) -> int:
    """Elements of the stock arm's parameters that the FORGE spec fuses (every linear and the output layer)."""
    return sum(p.numel() for m in ddp.modules() if type(m) in (ColumnParallelLinear, RowParallelLinear)
               for p in m.parameters(recurse=False))


def _peak(arm: Arm, shape: Shape, ctx: Context, baseline: int) -> dict:
    """Peak allocated bytes over ``timed_steps`` steps after warm-up; ``peak_gb`` counts only
    what lies above ``baseline`` (allocated before the arm was built)."""
    for step in range(ctx.args.warmup):
        train_step(arm, shape, step, ctx.device)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    for step in range(ctx.args.warmup, ctx.args.warmup + ctx.args.timed_steps):
        train_step(arm, shape, step, ctx.device)
    peak = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else 0
    return dict(peak_bytes=peak, baseline_bytes=baseline, peak_gb=(peak - baseline) / 2**30)


def _time_interleaved(arms: list[Arm], shape: Shape, ctx: Context) -> dict[str, dict]:
    """Median step time per arm over ``timed_steps`` rounds, the arms alternating step by step
    (and the order within a round too). Timed one after the other, the arms carried the host's
    drift into their ratio: in session 4 the stock arm's steps fell from ~157 to ~129 ms
    within ten steps."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    times: dict[str, list[float]] = {arm.name: [] for arm in arms}
    first = ctx.args.warmup + ctx.args.timed_steps
    for round_ in range(ctx.args.timed_steps):
        for arm in arms if round_ % 2 == 0 else arms[::-1]:
            sync()
            start = time.perf_counter()
            train_step(arm, shape, first + round_, ctx.device)
            sync()
            times[arm.name].append((time.perf_counter() - start) * 1e3)
    return {name: dict(step_ms=statistics.median(t), step_ms_all=t) for name, t in times.items()}


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", default=None, help=f"comma-separated, from {CELLS} (default: all the world "
                        "size allows: tp1, ep-local on 1 rank; tp2, tp2-sp, ep2, memory on 2)")
    parser.add_argument("--recipes", default="bf16-state,fp32-master", help=f"for the loss and memory cells, from "
                        f"{RECIPES}")
    parser.add_argument("--ep-recipes", default="fp32,fp32-master,bf16-state", help="for the ep-local and ep2 cells")
    parser.add_argument("--ep-local", default=None, help="the --out of a one-rank run of the ep-local cell: the "
                        "ep2 cell then also compares with its references (gated: FORGE experts vs FORGE experts)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--learned-steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--timed-steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--no-fp32-reference", dest="fp32_reference", action="store_false",
                        help="skip the all-fp32 reference arm of the loss cells (paper N.2's drift check)")
    parser.add_argument("--memory-layers", type=int, default=MEMORY_SHAPE.layers)
    parser.add_argument("--out", default="mcore_ab")
    parser.add_argument("--smoke", action="store_true", help="toy shapes on the CPU (gloo): checks the code path")
    parser.add_argument("--cell-timeout", type=float, default=500.0,
                        help="seconds; below the device tool's 600 s per command, so the stacks get printed")
    parser.add_argument("--timeout-minutes", type=int, default=5)
    parser.add_argument("--share-gpu", action="store_true",
                        help="two ranks on GPU 0, collectives over gloo (its CUDA all-to-all and all-reduce): the "
                        "ep2 cell's losses where one GPU is lent. A two-rank sum and the token all-to-all give "
                        "the bits NCCL gives; peaks and step times would not, so only ep2 runs this way")
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows of an earlier run in --out and skip every cell it attempted (one that "
                        "failed or was killed is recorded as such, not retried): a device script relaunches after "
                        "a failure to run the cells that remain")
    args = parser.parse_args(argv)
    for name in ("recipes", "ep_recipes"):
        values = [v for v in getattr(args, name).split(",") if v]
        unknown = sorted(set(values) - set(RECIPES))
        if unknown or not values:
            parser.error(f"--{name.replace('_', '-')}: unknown recipe(s) {unknown}; choose from {RECIPES}")
        setattr(args, name, values)
    if args.cells is not None:
        args.cells = [c for c in args.cells.split(",") if c]
        unknown = sorted(set(args.cells) - set(CELLS))
        if unknown:
            parser.error(f"--cells: unknown cell(s) {unknown}; choose from {CELLS}")
    if args.share_gpu and (args.smoke or args.cells != ["ep2"]):
        parser.error("--share-gpu runs the ep2 cell alone, on a GPU: pass --cells ep2 and no --smoke")
    if args.smoke:
        args.steps, args.learned_steps, args.warmup, args.timed_steps = 3, 4, 1, 2
    return args


@contextlib.contextmanager
def _uncoalesced(group=None, device=None, async_ops: bool = False):
    """``torch.distributed._coalescing_manager`` for megatron's DDP under ``--share-gpu``: gloo
    does not coalesce CUDA all-reduces, so each bucket's runs on its own (the same sums). The
    DDP here reduces synchronously; an overlapped reduction would need the real manager."""
    if async_ops:
        raise RuntimeError("--share-gpu runs megatron's DDP with synchronous grad reduction only")
    yield None


def _cells_for(world: int, requested: list[str] | None) -> list[str]:
    allowed = ["tp1", "ep-local"] if world == 1 else ["tp2", "tp2-sp", "ep2", "memory"]
    cells = requested or allowed
    wrong = [c for c in cells if c not in allowed]
    if wrong:
        raise SystemExit(f"cells {wrong} need {'2 ranks' if world == 1 else '1 rank'}: run them with "
                         f"torchrun --nproc-per-node {1 if world == 2 else 2}")
    return cells


def write_results(out: str, rows: list[dict], meta: dict, attempted: list[str] | None = None) -> None:
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "results.json"), {"meta": meta, "attempted": attempted or [], "rows": rows})
    fields = ["cell", "recipe", "layout", "metric", "value", "gate", "passed"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def load_previous(out: str) -> tuple[list[dict], list[str], list]:
    """(rows, attempted cells, earlier launches' meta) of an earlier run in ``out``; an attempted cell
    without a row (killed by its timeout, or another rank failed) gets an "unfinished" row."""
    path = os.path.join(out, "results.json")
    if not os.path.exists(path):
        return [], [], []
    with open(path) as f:
        previous = json.load(f)
    rows, attempted = previous.get("rows", []), previous.get("attempted", [])
    done = {r["cell"] for r in rows}
    for cell in attempted:
        if cell not in done:
            rows.append(dict(cell=cell, recipe="-", layout="-", metric="error", gate=None, passed=False,
                             value="unfinished: killed (cell timeout) or another rank failed; see the log"))
    meta = previous.get("meta", {})
    return rows, attempted, meta.get("launches", []) + [meta.get("argv")]


def error_row(cell: str, exc: BaseException) -> dict:
    message = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return dict(cell=cell, recipe="-", layout="-", metric="error", value=message, gate=None, passed=False,
                traceback=traceback.format_exc())


def format_table(rows: list[dict]) -> str:
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.3g}"
        return "-" if v is None else str(v)

    header = ["cell", "recipe", "layout", "metric", "value", "gate", "passed"]
    table = [header] + [[fmt(r.get(k)) for k in header] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in table)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")  # megatron's comm/compute ordering
    cpu = args.smoke or not torch.cuda.is_available()
    if cpu and not args.smoke:
        raise SystemExit("no CUDA device: run on the GPU machine, or pass --smoke for the CPU code-path check")
    if "RANK" not in os.environ:
        raise SystemExit("launch with torchrun, e.g. torchrun --nproc-per-node 2 -m forge_mcore.bench.mcore_ab")
    local_rank = 0 if args.share_gpu else int(os.environ.get("LOCAL_RANK", 0))
    if not cpu:
        torch.cuda.set_device(local_rank)
    if args.share_gpu:
        from megatron.core.distributed import param_and_grad_buffer

        param_and_grad_buffer._coalescing_manager = _uncoalesced
    dist.init_process_group("gloo" if cpu or args.share_gpu else "nccl",
                            timeout=datetime.timedelta(minutes=args.timeout_minutes))
    rank, world = dist.get_rank(), dist.get_world_size()
    if world not in (1, 2):
        raise SystemExit(f"run on 1 or 2 ranks, got {world}")
    cells = _cells_for(world, args.cells)
    device = torch.device("cpu") if cpu else torch.device("cuda", local_rank)
    shapes = (SMOKE_SHAPE, SMOKE_SHAPE, replace(SMOKE_SHAPE, experts=4, moe_ffn=32)) if args.smoke else (
        LOSS_SHAPE, replace(MEMORY_SHAPE, layers=args.memory_layers), MOE_SHAPE)
    ctx = Context(args, device, cpu, *shapes)

    rows: list[dict] = []
    attempted: list[str] = []
    launches: list = []
    if args.resume:  # rank 0 reads, every rank gets the same answer before anyone writes
        shared = [load_previous(args.out) if rank == 0 else None]
        dist.broadcast_object_list(shared, src=0)
        rows, attempted, launches = shared[0]
        if rank == 0 and attempted:
            print(f"[mcore_ab] --resume: skipping {attempted} (attempted before)", flush=True)
        cells = [c for c in cells if c not in attempted]
    meta = dict(argv=sys.argv, world=world, cells=cells, environment=environment(), smoke=args.smoke,
                share_gpu=args.share_gpu,
                shapes={k: asdict(v) for k, v in zip(("loss", "memory", "moe"), shapes)}, launches=launches)
    runners: dict[str, Callable[[], list[dict]]] = {
        "tp1": lambda: cell_dense(ctx, "tp1"), "tp2": lambda: cell_dense(ctx, "tp2"),
        "tp2-sp": lambda: cell_dense(ctx, "tp2-sp"), "ep2": lambda: cell_ep2(ctx), "memory": lambda: cell_memory(ctx),
        "ep-local": lambda: cell_ep_local(ctx),
    }
    with megatron_on_cpu() if cpu else contextlib.nullcontext():
        for cell in cells:
            attempted.append(cell)
            if rank == 0:  # recorded first: a cell killed by its timeout is known as attempted
                write_results(args.out, rows, meta, attempted)
                print(f"[mcore_ab] {cell} ...", flush=True)
            # a cell that hangs prints every stack and exits; torchrun then stops the other ranks
            faulthandler.dump_traceback_later(args.cell_timeout, exit=True)
            started = time.perf_counter()
            try:
                cell_rows = runners[cell]()
            except BaseException as exc:  # recorded (rank 0's view), then fail fast: torchrun stops the others
                faulthandler.cancel_dump_traceback_later()
                if rank == 0:
                    write_results(args.out, rows + [error_row(cell, exc)], meta, attempted)
                raise
            faulthandler.cancel_dump_traceback_later()
            for row in cell_rows:
                row["seconds"] = time.perf_counter() - started
            rows += cell_rows
            if rank == 0:
                write_results(args.out, rows, meta, attempted)
                print(f"[mcore_ab] {cell} done in {time.perf_counter() - started:.0f} s", flush=True)
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()
    if rank == 0:
        print(format_table(rows), flush=True)
        print(f"[mcore_ab] results in {os.path.abspath(args.out)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
