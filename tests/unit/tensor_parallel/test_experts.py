"""FORGE experts in megatron's MoE ``SequentialMLP`` vs stock experts + the reference step.

An expert that receives no tokens must still get the gradient-free part of its
update (paper Remark 1): torch.optim steps a zero gradient, and so must FORGE,
both when the expert's backward runs on zero tokens and when no backward
reaches it at all.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.distributed as dist
from megatron.core.optimizer import OptimizerConfig
from megatron.core.process_groups_config import ProcessGroupCollection
from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear
from megatron.core.transformer.mlp import MLPSubmodules
from megatron.core.transformer.moe.experts import SequentialMLP

from forge_mcore.tensor_parallel import ForgeColumnParallelLinear, ForgeMegatronOptimizer, ForgeRowParallelLinear
from tests.helpers import assert_close_verbose

from .common import FFN, HIDDEN, Container, init_parallel, transformer_config
from .ranks import on_ranks

EXPERTS, TOKENS = 4, 8
TOKENS_PER_EXPERT = torch.tensor([3, 0, 4, 1])  # expert 1 receives nothing


def _experts(config, forge: bool) -> SequentialMLP:
    column, row = (ForgeColumnParallelLinear, ForgeRowParallelLinear) if forge else (
        ColumnParallelLinear, RowParallelLinear)
    torch.manual_seed(7)
    return SequentialMLP(EXPERTS, config, MLPSubmodules(linear_fc1=column, linear_fc2=row),
                         pg_collection=ProcessGroupCollection.use_mpu_process_groups())


@on_ranks(1)
def experts_match_stock_and_unused_experts_decay(rank, world_size):
    init_parallel()
    # no biases: megatron's own expert-bias path adds in place to a view at EP = TP = 1
    config = transformer_config(num_moe_experts=EXPERTS, moe_ffn_hidden_size=FFN, moe_router_topk=2)
    stock, forge = _experts(config, False), _experts(config, True)
    hp = dict(lr=0.01, weight_decay=0.1)
    optimizer = ForgeMegatronOptimizer(OptimizerConfig(optimizer="adam", clip_grad=0.0, **hp),
                                       [Container(config, experts=forge)])
    handles = optimizer.engine.managed
    assert len(handles) == EXPERTS * 2 and all(h.step_when_unused and h.grad_scale is None for h in handles)
    reference = torch.optim.AdamW(stock.parameters(), **hp)

    def compare(what):
        for (name, a), b in zip(stock.named_parameters(), forge.parameters()):
            assert_close_verbose(b, a.detach(), rtol=1e-6, atol=1e-7, what=f"{what} {name}")

    gen = torch.Generator().manual_seed(3)
    for step in range(5):
        x = torch.randn(TOKENS, HIDDEN, generator=gen, requires_grad=True)
        probs, target = torch.rand(TOKENS, generator=gen), torch.randn(TOKENS, HIDDEN, generator=gen)
        for model in (stock, forge):
            out, _ = model(x, TOKENS_PER_EXPERT, probs)
            (out - target).pow(2).mean().backward()
        reference.step()
        reference.zero_grad(set_to_none=False)  # torch steps the unused expert on its zero gradient
        optimizer.step()
        compare(f"step {step}")
    unused = [n for n, p in forge.named_parameters() if n.startswith("local_experts.1.")]
    assert unused, "expert 1 must exist"
    # an iteration in which no backward reaches any expert (their MoE layer was skipped)
    before = [p.clone() for p in forge.parameters()]
    reference.step()
    optimizer.step()
    compare("no backward")
    assert all(not torch.equal(a, b) for a, b in zip(before, forge.parameters())), "every expert must decay"


def test_experts_match_stock_and_unused_experts_decay(rank_results):
    rank_results(experts_match_stock_and_unused_experts_decay)


def _ep2_backward(rank: int):
    """EP=2 beside data parallelism 2, a learned top-2 router, each rank its own batch, every expert
    FORGE (--forge-clip exact materializes its gradient): the stock GPT's local experts with their
    autograd gradients of the rank's loss, and the FORGE GPT's optimizer after its backward and
    megatron's gradient finalization."""
    from megatron.core.distributed import finalize_model_grads

    from forge_mcore.tensor_parallel import ForgeMegatronConfig, get_megatron_optimizer_with_forge

    from .common import build_gpt, gpt_batch

    init_parallel(ep=2)
    config = transformer_config(num_moe_experts=EXPERTS, moe_ffn_hidden_size=FFN, moe_router_topk=2)
    stock, forge = build_gpt(config, forge=False), build_gpt(config, forge=True, dense=False)
    optimizer = get_megatron_optimizer_with_forge(OptimizerConfig(optimizer="adam", lr=0.01, clip_grad=1e6), [forge],
                                                  ForgeMegatronConfig(dense=False, clip="exact"))
    batch = gpt_batch(rank)
    experts = [(name, p) for name, p in stock.named_parameters() if "local_experts" in name]
    reference = torch.autograd.grad(stock(**batch).float().mean(), [p for _, p in experts], allow_unused=True)
    forge.zero_grad_buffer()
    optimizer.zero_grad()
    forge(**batch).float().mean().backward()
    finalize_model_grads([forge])
    return experts, reference, optimizer


@on_ranks(2)
def ep2_expert_gradients_are_the_mean_loss_gradient(rank, world_size):
    """A FORGE expert's gradient (with DDP's 1/dp folded in) is the gradient of the ranks' mean
    loss, taken by autograd through the dispatcher's collectives on an identical stock GPT
    (``_ep2_backward``). (Not stock megatron's main_grad: on this CPU/gloo path it was seen to differ
    from that gradient, and from stock at DP=1.)"""
    experts, reference, optimizer = _ep2_backward(rank)
    handles = {h.name: h for h in optimizer.chained_optimizers[-1].engine.managed}
    routed = 0
    for (name, p), grad in zip(experts, reference):
        handle = handles[name.removeprefix("module.")]
        expected = (grad if grad is not None else torch.zeros_like(p)) / world_size
        got = handle.accum * handle.grad_scale if handle.accum is not None else torch.zeros_like(p)
        assert_close_verbose(got, expected, rtol=1e-5, atol=1e-8, what=f"rank {rank} {name}")
        routed += int(handle.accum is not None)
    assert routed, "no local expert received a token"


def test_ep2_expert_gradients_are_the_mean_loss_gradient(rank_results):
    rank_results(ep2_expert_gradients_are_the_mean_loss_gradient)


@on_ranks(2)
def ep2_grad_norm_counts_every_expert_once(rank, world_size):
    """FORGE's norm is that of the mean-loss expert gradients of both EP ranks (DDP's 1/dp squared),
    and FORGE reports the expert group, so the chain sums its members' norms rather than reducing
    FORGE's part over the dense model-parallel group."""
    _, grads, chained = _ep2_backward(rank)
    expected = torch.tensor(sum(float((g / world_size).pow(2).sum()) for g in grads if g is not None))
    dist.all_reduce(expected)  # each EP rank holds its own experts
    chained.prepare_grads()
    assert chained.chained_optimizers[-1].get_grad_norm() == pytest.approx(expected.sqrt().item(), rel=1e-5)
    members = math.sqrt(sum(opt.get_grad_norm() ** 2 for opt in chained.chained_optimizers))
    assert expected > 0 and chained.get_grad_norm() == pytest.approx(members, rel=1e-5)
    return True


def test_ep2_grad_norm_counts_every_expert_once(rank_results):
    assert rank_results(ep2_grad_norm_counts_every_expert_once) is True
