"""FORGE column -> row MLP vs stock megatron layers + the reference step, on gloo ranks.

Each scenario builds the same MLP twice from one seed: stock ``ColumnParallelLinear``
-> ``RowParallelLinear`` stepped by ``torch.optim`` on their ``.grad``, and the FORGE
twins stepped inside backward by ``ForgeMegatronOptimizer``. Weights and biases
are compared after every step (fp32, <= 1e-6 relative).
"""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from megatron.core import parallel_state
from megatron.core.optimizer import OptimizerConfig
from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear

from forge_mcore.tensor_parallel import (
    ForgeColumnParallelLinear,
    ForgeMegatronConfig,
    ForgeMegatronOptimizer,
    ForgeRowParallelLinear,
)
from tests.helpers import assert_close_verbose

from .common import BATCH, FFN, HIDDEN, SEQ, Container, init_parallel, tp_rank_slice, transformer_config
from .ranks import on_ranks

STEPS = 5
# (bias, skip_bias_add, gather_output, rule): the Qwen3 case, added biases, returned
# biases (the caller adds them), and a gathered column output feeding a row layer that
# scatters its input.
VARIANTS = [
    (False, False, False, "adamw"),
    (True, False, False, "adamw"),
    (True, True, False, "sgd"),
    (True, False, True, "adamw"),
]


def _mlp(config, forge: bool, bias: bool, skip_bias_add: bool, gather_output: bool) -> Container:
    column, row = (ForgeColumnParallelLinear, ForgeRowParallelLinear) if forge else (
        ColumnParallelLinear, RowParallelLinear)
    torch.manual_seed(1234)
    init = torch.nn.init.xavier_normal_
    fc1 = column(HIDDEN, FFN, config=config, init_method=init, bias=bias, gather_output=gather_output,
                 skip_bias_add=skip_bias_add, stride=2 if not gather_output else 1)
    fc2 = row(FFN, HIDDEN, config=config, init_method=init, bias=bias, input_is_parallel=not gather_output,
              skip_bias_add=skip_bias_add)
    if bias:  # megatron zero-initializes biases; give them values so their steps show
        with torch.no_grad():
            for layer in (fc1, fc2):
                layer.bias.copy_(torch.linspace(-0.5, 0.5, layer.bias.numel()))
    return Container(config, fc1=fc1, fc2=fc2)


def _forward(mlp: Container, x: torch.Tensor) -> torch.Tensor:
    h, b = mlp.fc1(x)
    h = torch.nn.functional.gelu(h if b is None else h + b)
    y, b = mlp.fc2(h)
    return y if b is None else y + b


def _inputs(step: int, sequence_parallel: bool):
    gen = torch.Generator().manual_seed(100 + step)
    x = torch.randn(SEQ, BATCH, HIDDEN, generator=gen)
    target = torch.randn(SEQ, BATCH, HIDDEN, generator=gen)
    if sequence_parallel:
        x, target = tp_rank_slice(x, 0), tp_rank_slice(target, 0)
    return x.requires_grad_(), target


def _reference_step(params, opt, config, sequence_parallel):
    # What finalize_model_grads does for a sequence-parallel bias: sum its partial gradients over TP.
    for p in params:
        if sequence_parallel and getattr(p, "sequence_parallel", False):
            dist.all_reduce(p.grad, group=parallel_state.get_tensor_model_parallel_group())
    opt.step()
    opt.zero_grad()


def _compare_mlps(tp: int, sequence_parallel: bool, variants) -> int:
    init_parallel(tp=tp)
    config = transformer_config(sequence_parallel=sequence_parallel)
    compared = 0
    for bias, skip_bias_add, gather_output, rule in variants:
        stock = _mlp(config, False, bias, skip_bias_add, gather_output)
        forge = _mlp(config, True, bias, skip_bias_add, gather_output)
        hp = dict(lr=0.01, weight_decay=0.1)
        opt_config = OptimizerConfig(optimizer="adam" if rule == "adamw" else "sgd", clip_grad=0.0,
                                     sgd_momentum=0.9, **hp)
        forge_opt = ForgeMegatronOptimizer(opt_config, [forge], ForgeMegatronConfig(optimizer=rule))
        params = list(stock.parameters())
        ref = (torch.optim.AdamW(params, **hp) if rule == "adamw"
               else torch.optim.SGD(params, momentum=0.9, **hp))
        for step in range(STEPS):
            x, target = _inputs(step, sequence_parallel)
            losses = []
            for model in (stock, forge):
                loss = (_forward(model, x) - target).pow(2).mean()
                loss.backward()
                losses.append(loss.detach())
            assert_close_verbose(losses[1], losses[0], rtol=1e-6, what=f"step {step} loss")
            _reference_step(params, ref, config, sequence_parallel)
            assert forge_opt.step()[0]
            for (name, p_ref), p_forge in zip(stock.named_parameters(), forge.parameters()):
                what = f"tp={tp} sp={sequence_parallel} bias={bias} skip={skip_bias_add} gather={gather_output} " \
                       f"{rule} step {step} {name}"
                assert_close_verbose(p_forge, p_ref.detach(), rtol=1e-6, atol=1e-7, what=what)
                compared += 1
    return compared


@on_ranks(1)
def mlp_parity_tp1(rank, world_size):
    return _compare_mlps(1, False, VARIANTS)


@on_ranks(2)
def mlp_parity_tp2(rank, world_size):
    return _compare_mlps(2, False, VARIANTS)


@on_ranks(2)
def mlp_parity_tp2_sequence_parallel(rank, world_size):
    return _compare_mlps(2, True, [v for v in VARIANTS if not v[2]])  # SP needs input_is_parallel rows


def test_mlp_matches_stock_layers_and_reference_step_tp1(rank_results):
    assert rank_results(mlp_parity_tp1) == STEPS * sum(4 if bias else 2 for bias, *_ in VARIANTS)


def test_mlp_matches_stock_layers_and_reference_step_tp2(rank_results):
    assert rank_results(mlp_parity_tp2) == STEPS * sum(4 if bias else 2 for bias, *_ in VARIANTS)


def test_mlp_matches_stock_layers_under_sequence_parallelism(rank_results):
    assert rank_results(mlp_parity_tp2_sequence_parallel) > 0


@on_ranks(2)
def mlp_grad_norm_and_clipping_tp2(rank, world_size):
    """step() alone returns megatron's grad norm (the shards' squares summed over TP, the replicated
    row-parallel bias counted once) and clips by it, as megatron clips the stock layers' grads."""
    from megatron.core.optimizer.clip_grads import clip_grad_by_total_norm_fp32, get_grad_norm_fp32
    from megatron.core.tensor_parallel import param_is_not_tensor_parallel_duplicate

    init_parallel(tp=2)
    for sequence_parallel in (False, True):
        config = transformer_config(sequence_parallel=sequence_parallel)
        stock, forge = _mlp(config, False, True, False, False), _mlp(config, True, True, False, False)
        hp = dict(lr=0.01, weight_decay=0.1)
        forge_opt = ForgeMegatronOptimizer(OptimizerConfig(optimizer="adam", clip_grad=0.05, **hp), [forge],
                                           ForgeMegatronConfig(clip="exact"))
        params = list(stock.parameters())
        ref = torch.optim.AdamW(params, **hp)
        for step in range(3):
            x, target = _inputs(step, sequence_parallel)
            for model in (stock, forge):
                (_forward(model, x) - target).pow(2).mean().backward()
            for p in params:  # finalize_model_grads' TP reduction of a sequence-parallel bias
                if sequence_parallel and getattr(p, "sequence_parallel", False):
                    dist.all_reduce(p.grad, group=parallel_state.get_tensor_model_parallel_group())
            grads = [p.grad for p in params if param_is_not_tensor_parallel_duplicate(p)]
            norm = get_grad_norm_fp32(grads, grad_stats_parallel_group=parallel_state.get_model_parallel_group())
            clip_grad_by_total_norm_fp32(params, 0.05, norm)
            ref.step()
            ref.zero_grad()
            ok, forge_norm, _ = forge_opt.step()
            what = f"sp={sequence_parallel} step {step}"
            assert ok and norm > 0.05 and forge_norm == pytest.approx(norm, rel=1e-5), (what, forge_norm, norm)
            for (name, a), b in zip(stock.named_parameters(), forge.parameters()):
                assert_close_verbose(b, a.detach(), rtol=1e-5, atol=1e-7, what=f"{what} {name}")
    return True


def test_standalone_step_returns_and_clips_by_megatrons_grad_norm_tp2(rank_results):
    assert rank_results(mlp_grad_norm_and_clipping_tp2) is True


@on_ranks(1)
def biases_skip_weight_decay_under_the_scheduler(rank, world_size):
    """megatron's standard overrides give biases wd_mult=0, which OptimizerParamScheduler applies to
    every group: the FORGE biases must not decay, as megatron's stock biases do not."""
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

    init_parallel()
    config = transformer_config()
    stock, forge = _mlp(config, False, True, False, False), _mlp(config, True, True, False, False)
    hp = dict(lr=0.01, weight_decay=0.1)
    forge_opt = ForgeMegatronOptimizer(OptimizerConfig(optimizer="adam", clip_grad=0.0, min_lr=0.01, **hp), [forge])
    OptimizerParamScheduler(forge_opt, init_lr=0.01, max_lr=0.01, min_lr=0.01, lr_warmup_steps=0, lr_decay_steps=4,
                            lr_decay_style="constant", start_wd=0.1, end_wd=0.1, wd_incr_steps=4,
                            wd_incr_style="constant")
    ref = torch.optim.AdamW([{"params": [stock.fc1.weight, stock.fc2.weight]},
                             {"params": [stock.fc1.bias, stock.fc2.bias], "weight_decay": 0.0}], **hp)
    for step in range(3):
        x, target = _inputs(step, False)
        for model in (stock, forge):
            (_forward(model, x) - target).pow(2).mean().backward()
        ref.step()
        ref.zero_grad()
        assert forge_opt.step()[0]
    for (name, a), b in zip(stock.named_parameters(), forge.parameters()):
        assert_close_verbose(b, a.detach(), rtol=1e-6, atol=1e-7, what=name)
    return True


def test_biases_skip_weight_decay_as_megatron_schedules_it(rank_results):
    assert rank_results(biases_skip_weight_decay_under_the_scheduler) is True
