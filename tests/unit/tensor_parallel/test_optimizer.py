"""A FORGE GPT inside megatron-core's training machinery vs the stock GPT, on gloo ranks.

Both arms are a tiny Qwen3-shaped GPT from the local spec wrapped in megatron's
DDP, finalized by ``finalize_model_grads`` and stepped by a ``ChainedOptimizer``
driven by ``OptimizerParamScheduler``: the stock arm by ``get_megatron_optimizer``
alone, the FORGE arm by ``get_megatron_optimizer_with_forge``.
"""

from __future__ import annotations

import shutil
import tempfile

import pytest
import torch
import torch.distributed as dist
from megatron.core import dist_checkpointing
from megatron.core.optimizer import OptimizerConfig, ParamKey, get_megatron_optimizer

from forge_mcore.tensor_parallel import ForgeMegatronConfig, forge_layers, get_megatron_optimizer_with_forge
from tests.helpers import assert_close_verbose

from .common import BATCH, SEQ, build_gpt, gpt_batch, init_parallel, param_scheduler, train_step, transformer_config
from .ranks import on_ranks

STEPS = 5


def _optimizer_config(**overrides) -> OptimizerConfig:
    return OptimizerConfig(**{**dict(optimizer="adam", lr=0.02, min_lr=0.002, weight_decay=0.1, clip_grad=0.0),
                              **overrides})


def _arms(tp: int, sequence_parallel: bool, forge_config: ForgeMegatronConfig, *, config_overrides=None,
          num_microbatches=None, **opt_overrides):
    init_parallel(tp=tp)
    config = transformer_config(sequence_parallel=sequence_parallel)
    stock, forge = build_gpt(config, forge=False), build_gpt(config, forge=True)
    for (name, a), b in zip(stock.state_dict().items(), forge.state_dict().values()):
        assert a is None or torch.equal(a, b), f"{name}: the arms start from different weights"
    stock_opt = get_megatron_optimizer(_optimizer_config(**opt_overrides), [stock], config_overrides)
    forge_opt = get_megatron_optimizer_with_forge(_optimizer_config(**opt_overrides), [forge], forge_config,
                                                  config_overrides=config_overrides,
                                                  num_microbatches=num_microbatches)
    return stock, stock_opt, forge, forge_opt


def _fused_params(model) -> list[torch.nn.Parameter]:
    return [p for _, layer in forge_layers([model]) for p in (layer.weight, layer.bias) if p is not None]


def _assert_fused_weights_left_megatron(model, chained) -> None:
    fused = _fused_params(model)
    assert fused and all(not p.requires_grad and not hasattr(p, "main_grad") for p in fused)
    ddp_params = set(model.param_to_bucket_group) | {p for b in model.buffers for p in b.params}
    megatron_params = [p for opt in chained.chained_optimizers[:-1] for g in opt.param_groups for p in g["params"]]
    for p in fused:
        assert p not in ddp_params, "a fused weight has a slot in megatron's DDP grad buffers"
        assert all(p is not q for q in megatron_params), "a fused weight is in megatron's optimizer"
    forge_opt = chained.chained_optimizers[-1]
    assert {id(h.param) for h in forge_opt.engine.managed} == {id(p) for p in fused}
    assert megatron_params, "the stock parameters (embedding, norms) must stay with megatron"


def _compare(stock, stock_opt, forge, forge_opt, steps=STEPS, rtol=2e-5, fused_too=True, micro_batches=1):
    fused = {id(p) for p in _fused_params(forge)}
    schedulers = [param_scheduler(stock_opt), param_scheduler(forge_opt)]
    for step in range(steps):
        loss_s, norm_s = train_step(stock, stock_opt, schedulers[0], step, micro_batches)
        loss_f, norm_f = train_step(forge, forge_opt, schedulers[1], step, micro_batches)
        assert_close_verbose(torch.tensor(loss_f), torch.tensor(loss_s), rtol=1e-5, what=f"step {step} loss")
        assert_close_verbose(torch.tensor(norm_f), torch.tensor(norm_s), rtol=1e-5, what=f"step {step} grad norm")
        # asked again after step(): the stepped iteration's norm, clipped as stock's main_grads are
        assert forge_opt.get_grad_norm() == pytest.approx(stock_opt.get_grad_norm(), rel=1e-5)
        # the scheduler drives the lr the kernel reads next
        assert {g["lr"] for g in forge_opt.chained_optimizers[-1].param_groups} <= {
            g["lr"] for g in stock_opt.param_groups}
        for (name, a), b in zip(stock.named_parameters(), forge.parameters()):
            if fused_too or id(b) not in fused:
                assert_close_verbose(b, a.detach(), rtol=rtol, atol=1e-6, what=f"step {step} {name}")


@on_ranks(2)
def gpt_matches_stock_tp2(rank, world_size):
    stock, stock_opt, forge, forge_opt = _arms(2, False, ForgeMegatronConfig())
    _assert_fused_weights_left_megatron(forge, forge_opt)
    _compare(stock, stock_opt, forge, forge_opt)


@on_ranks(2)
def gpt_matches_stock_tp2_sequence_parallel(rank, world_size):
    stock, stock_opt, forge, forge_opt = _arms(2, True, ForgeMegatronConfig())
    _compare(stock, stock_opt, forge, forge_opt)


@on_ranks(2)
def gpt_clip_exact_matches_stock_tp2(rank, world_size):
    stock, stock_opt, forge, forge_opt = _arms(2, False, ForgeMegatronConfig(clip="exact"), clip_grad=0.05)
    _compare(stock, stock_opt, forge, forge_opt)


@on_ranks(2)
def gpt_config_overrides_match_stock_tp2(rank, world_size):
    """A name pattern matches the fused weights as megatron's _get_param_groups matches the stock
    ones: against the wrapped chunk's own names (DDP's "module." included)."""
    layer0 = {ParamKey(name="module.decoder.layers.0.*"): {"max_lr": 0.005, "min_lr": 0.0005}}
    stock, stock_opt, forge, forge_opt = _arms(2, False, ForgeMegatronConfig(), config_overrides=layer0)
    groups = forge_opt.chained_optimizers[-1].engine.param_groups
    fused_layer0 = {id(p) for name, layer in forge_layers([forge]) if name.startswith("decoder.layers.0.")
                    for p in (layer.weight, layer.bias) if p is not None}
    assert fused_layer0 and {id(p) for g in groups if g["max_lr"] == 0.005 for p in g["params"]} == fused_layer0
    _compare(stock, stock_opt, forge, forge_opt)


@on_ranks(2)
def gpt_clip_exact_two_micro_batches_tp2(rank, world_size):
    """Under --forge-clip exact the fused gradients are accumulated, so micro-batches are accepted."""
    stock, stock_opt, forge, forge_opt = _arms(2, False, ForgeMegatronConfig(clip="exact"), clip_grad=0.05,
                                               num_microbatches=2)
    _compare(stock, stock_opt, forge, forge_opt, micro_batches=2)


def _pipeline_arm(forge: bool, micro_batches: int, forge_config: ForgeMegatronConfig, clip_grad: float):
    """Three steps through megatron's pipeline schedule: (losses on the last stage, grad norms, weights)."""
    from megatron.core.distributed import finalize_model_grads
    from megatron.core.pipeline_parallel import get_forward_backward_func

    config = transformer_config()
    config.finalize_model_grads_func = finalize_model_grads
    model = build_gpt(config, forge=forge)
    if forge:
        optimizer = get_megatron_optimizer_with_forge(_optimizer_config(clip_grad=clip_grad), [model], forge_config,
                                                      num_microbatches=micro_batches)
    else:
        optimizer = get_megatron_optimizer(_optimizer_config(clip_grad=clip_grad), [model])

    def forward_step(data_iterator, model):
        output = model(**next(data_iterator))
        return output, lambda out: (out.float().mean(), {"loss": out.float().mean().detach()})

    losses, norms = [], []
    for step in range(3):
        batch = gpt_batch(step)
        micro = [{k: None if v is None else v.chunk(micro_batches)[m] for k, v in batch.items()}
                 for m in range(micro_batches)]
        model.zero_grad_buffer()
        optimizer.zero_grad()
        results = get_forward_backward_func()(
            forward_step_func=forward_step, data_iterator=iter(micro), model=[model], num_microbatches=micro_batches,
            seq_length=SEQ, micro_batch_size=BATCH // micro_batches, forward_only=False)
        ok, grad_norm, _ = optimizer.step()
        assert ok
        losses += [r["loss"].item() for r in results]
        norms.append(grad_norm)
    return losses, norms, [p.detach().clone() for p in model.parameters()]


@on_ranks(2)
def gpt_pipeline_parallel_matches_stock_pp2(rank, world_size):
    """PP=2 through megatron's schedule: one micro-batch per step, or several under --forge-clip exact."""
    init_parallel(pp=2)
    for micro_batches, forge_config, clip_grad in ((1, ForgeMegatronConfig(), 0.0),
                                                   (2, ForgeMegatronConfig(clip="exact"), 0.05)):
        stock = _pipeline_arm(False, micro_batches, forge_config, clip_grad)
        forge = _pipeline_arm(True, micro_batches, forge_config, clip_grad)
        what = f"{micro_batches} micro-batch(es), stage {rank}"
        assert len(stock[0]) == (3 * micro_batches if rank == 1 else 0)
        assert forge[0] == pytest.approx(stock[0], rel=1e-5), what
        assert forge[1] == pytest.approx(stock[1], rel=1e-5), what
        for a, b in zip(stock[2], forge[2]):
            assert_close_verbose(b, a, rtol=2e-5, atol=1e-6, what=what)


@on_ranks(2)
def gpt_clip_previous_tp2(rank, world_size):
    """The stock parameters are clipped as usual; the fused ones by the previous step's coefficient."""
    stock, stock_opt, forge, forge_opt = _arms(2, False, ForgeMegatronConfig(clip="previous"), clip_grad=0.05)
    engine = forge_opt.chained_optimizers[-1].engine
    for step in range(3):
        _, norm = train_step(forge, forge_opt, None, step)
        expected = min(1.0, 0.05 / (norm + 1e-6))
        assert expected < 1 and abs(engine.grad_scale.item() - expected) <= 1e-6 * expected
        if step == 0:  # same global norm as the stock arm, so the stock parameters moved alike
            _, norm_stock = train_step(stock, stock_opt, None, step)
            assert_close_verbose(torch.tensor(norm), torch.tensor(norm_stock), rtol=1e-5, what="grad norm")
            for a, b in zip(stock.parameters(), forge.parameters()):
                if b.requires_grad:
                    assert_close_verbose(b, a.detach(), rtol=1e-5, atol=1e-6, what="stock parameter under clipping")


@on_ranks(2)
def checkpoint_round_trip_tp2(rank, world_size):
    """sharded_state_dict save -> load at the same layout -> training continues bit for bit."""
    init_parallel(tp=2)
    config = transformer_config()

    def arm(seed):
        model = build_gpt(config, forge=True, seed=seed)
        opt = get_megatron_optimizer_with_forge(_optimizer_config(), [model], ForgeMegatronConfig(state_dtype="int8"))
        return model, opt, param_scheduler(opt)

    def sharded(model, opt, is_loading):
        model_sd = model.module.sharded_state_dict()
        return {"model": model_sd, "optimizer": opt.sharded_state_dict(model_sd, is_loading=is_loading)}

    model, opt, sched = arm(1234)
    for step in range(2):
        train_step(model, opt, sched, step)
    path = [tempfile.mkdtemp() if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)
    dist_checkpointing.save(sharded(model, opt, False), path[0])
    sched_state = sched.state_dict()
    for step in range(2, 4):
        train_step(model, opt, sched, step)

    model2, opt2, sched2 = arm(999)  # different initial weights: everything must come from the checkpoint
    loaded = dist_checkpointing.load(sharded(model2, opt2, True), path[0])
    model2.module.load_state_dict(loaded["model"])
    opt2.load_state_dict(loaded["optimizer"])
    sched2.load_state_dict(sched_state)
    for step in range(2, 4):
        train_step(model2, opt2, sched2, step)
    dist.barrier()
    if rank == 0:
        shutil.rmtree(path[0])
    for (name, a), b in zip(model.named_parameters(), model2.parameters()):
        assert torch.equal(a, b), f"{name} differs after resuming from the checkpoint"


def _leaves(obj) -> list:
    if isinstance(obj, dict):
        return [leaf for key in sorted(obj, key=str) for leaf in _leaves(obj[key])]
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj.clone() if isinstance(obj, torch.Tensor) else obj]


@on_ranks(1)
def refused_load_leaves_every_member_unloaded(rank, world_size):
    """A state_dict FORGE refuses (int8 states into fp32 ones) is refused before megatron's
    members (which come first in the chain) load theirs."""
    init_parallel()
    config = transformer_config()
    arms = []
    for state_dtype, seed in (("int8", 1), ("fp32", 2)):
        model = build_gpt(config, forge=True, seed=seed)
        optimizer = get_megatron_optimizer_with_forge(_optimizer_config(), [model],
                                                      ForgeMegatronConfig(state_dtype=state_dtype))
        train_step(model, optimizer, None, 0)
        arms.append(optimizer)
    saved, target = arms[0].state_dict(), arms[1]
    before = _leaves(target.state_dict())
    with pytest.raises(ValueError, match="state_dtype='int8', this state uses 'fp32'"):
        target.load_state_dict(saved)
    after = _leaves(target.state_dict())
    assert len(before) == len(after) and all(
        torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b for a, b in zip(before, after))


SCENARIOS = [gpt_matches_stock_tp2, gpt_matches_stock_tp2_sequence_parallel, gpt_clip_exact_matches_stock_tp2,
             gpt_config_overrides_match_stock_tp2, gpt_clip_exact_two_micro_batches_tp2,
             gpt_pipeline_parallel_matches_stock_pp2, gpt_clip_previous_tp2, checkpoint_round_trip_tp2]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_gpt_tp2(rank_results, scenario):
    rank_results(scenario)


def test_a_refused_load_leaves_every_member_unloaded(rank_results):
    rank_results(refused_load_leaves_every_member_unloaded)
