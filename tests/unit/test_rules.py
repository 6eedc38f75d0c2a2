"""Rules: registry, hyperparameter checks, and the torch references against torch.optim."""

from __future__ import annotations

import pytest
import torch

import forge_mcore as fm
from tests.helpers import assert_close_verbose, grid_tensor
from tests.unit.cases import RULE_CASES, STEPS, case_id


def test_registry_lists_every_tile_local_family():
    assert fm.available_rules() == ["adagrad", "adam", "adamax", "adamw", "lion", "nadam", "radam", "rmsprop", "sgd"]
    assert fm.get_rule("AdamW") is fm.get_rule("adamw")
    with pytest.raises(ValueError, match="available"):
        fm.get_rule("lamb")
    with pytest.raises(TypeError):
        fm.get_rule(3)


def test_a_rule_with_more_per_step_scalars_than_the_kernels_read_is_refused():
    """The kernels load a rule's scalars once into a tuple of ``MAX_HYPER`` (``load_hyper``)."""
    from forge_mcore.rules.base import MAX_HYPER, register

    class TooManyScalars(type(fm.get_rule("sgd"))):
        name = "too_many_scalars"
        hyper_names = tuple(f"h{i}" for i in range(MAX_HYPER + 1))

    with pytest.raises(ValueError, match="MAX_HYPER"):
        register(TooManyScalars)
    assert "too_many_scalars" not in fm.available_rules()
    assert all(len(fm.get_rule(name).hyper_names) <= MAX_HYPER for name in fm.available_rules())


@pytest.mark.parametrize("rule,bad,match", [
    ("adamw", dict(lr=-1.0), "lr"),
    ("adamw", dict(lr=float("nan")), "lr"),
    ("adamw", dict(betas=(0.9, 1.0)), "betas"),
    ("adamw", dict(betas=0.9), "betas"),
    ("adam", dict(eps=-1e-8), "eps"),
    ("sgd", dict(nesterov=True), "nesterov"),
    ("sgd", dict(momentum=-0.1), "momentum"),
    ("rmsprop", dict(alpha=1.5), "alpha"),
    ("adagrad", dict(lr_decay=-1.0), "lr_decay"),
    ("lion", dict(weight_decay=-0.1), "weight_decay"),
])
def test_bad_hyperparameters_name_the_argument(rule, bad, match):
    with pytest.raises(ValueError, match=match):
        fm.get_rule(rule).make_group(**bad)


def test_unknown_hyperparameter_raises_type_error():
    with pytest.raises(TypeError, match="momentum"):
        fm.get_rule("adamw").make_group(momentum=0.9)


def test_affine_rules_are_declared():
    # reduce-into-state under data parallelism is exact only for these (paper Prop. 2(iii))
    affine = {name for name in fm.available_rules() if fm.get_rule(name).affine_in_grad(fm.get_rule(name).make_group())}
    assert affine == {"sgd"}


def test_state_structure_change_is_refused():
    w = torch.zeros(4, 64)
    state = fm.ForgeParamState.create(w, "sgd", {"momentum": 0.0})
    with pytest.raises(ValueError, match="momentum"):
        state.prepare_step(fm.get_rule("sgd").make_group(momentum=0.9))


def test_per_step_scalars_are_one_device_buffer():
    w = torch.zeros(4, 64)
    state = fm.ForgeParamState.create(w, "adamw")
    g = state.rule.make_group(lr=0.1)
    h1 = state.prepare_step(g)
    ptr, first = h1.data_ptr(), h1.clone()
    g["lr"] = 0.2
    h2 = state.prepare_step(g)
    assert h2.data_ptr() == ptr, "the scalars must stay in one buffer (CUDA-graph friendly)"
    assert not torch.equal(first, h2) and state.step == 2


@pytest.mark.parametrize("rule", ["nadam", "radam", "adamw"])
def test_shared_scalar_memo_matches_each_state_alone(rule):
    """The engine prepares hundreds of states per iteration with one memo: states at
    different steps (an expert that got no tokens) or with different scalar state
    (NAdam's mu_product) must still get their own scalars and seeds."""
    group = fm.get_rule(rule).make_group(lr=0.1)
    states = [fm.ForgeParamState.create(torch.zeros(4, 64), rule, group) for _ in range(4)]
    for i, state in enumerate(states):
        for _ in range(i % 2 + i // 2):  # steps 0, 1, 1, 2
            state.prepare_step(group)
    memo: dict = {}
    shared = [s.next_step(group, memo) for s in states]
    alone = [s.next_step(group) for s in states]
    for a, b in zip(shared, alone):
        assert a.values == b.values and a.step == b.step and a.scalars == b.scalars
    assert shared[1].values == shared[2].values[:-1] + [shared[1].values[-1]]  # same step: rule scalars shared
    assert shared[0].values[:-1] != shared[3].values[:-1]  # different steps: different bias corrections
    assert len({p.values[-1] for p in shared}) == 4  # every state its own seed


STATEFUL_CASES = [c for c in RULE_CASES if fm.get_rule(c[0]).states(fm.get_rule(c[0]).make_group(**c[1]))]


@pytest.mark.parametrize("case", STATEFUL_CASES, ids=case_id)
def test_zero_stays_zero_is_declared_exactly_where_it_holds(case):
    """``Rule.zero_stays_zero`` lets the Gluon kernel skip zeroing the elements past a weight's
    edge before an int8 absmax (weight, states and gradient all read as zeros there): it must hold
    for every variant and step where declared, and a rule where it fails (Adamax's ``|g| + eps``)
    must not declare it."""
    rule, group = case
    w = torch.zeros(4, 64)
    state = fm.ForgeParamState.create(w, rule, group)
    g = state.rule.make_group(**group)
    stays_zero = True
    for _ in range(STEPS):
        for slot in state.slots:
            if slot is not None:
                slot.data.zero_()
        fm.fused_wgrad_step(torch.zeros(3, 4), torch.zeros(3, 64), w, state, state.prepare_step(g), backend="torch")
        stays_zero &= all(bool((slot.data == 0).all()) for slot in state.slots if slot is not None)
    assert stays_zero == state.rule.zero_stays_zero


@pytest.mark.parametrize("case", [c for c in RULE_CASES if c[0] != "lion"], ids=case_id)
def test_torch_backend_matches_torch_optim(case):
    rule, group = case
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(33, 70, generator=gen)
    param = torch.nn.Parameter(w.clone())
    opt = fm.get_rule(rule).torch_equivalent([param], **group)
    state = fm.ForgeParamState.create(w, rule, group)
    g = state.rule.make_group(**group)
    for _ in range(STEPS):
        dy, x = grid_tensor(5, 33, generator=gen), grid_tensor(5, 70, generator=gen)
        param.grad = (dy.double().t() @ x.double()).float()
        opt.step()
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), backend="torch")
    assert_close_verbose(w, param.detach(), rtol=1e-6, atol=1e-6 * param.abs().max().item(), what=rule)


def test_lion_reference_matches_the_paper_algorithm():
    gen = torch.Generator().manual_seed(4)
    w = torch.randn(8, 64, generator=gen)
    ref_w, m = w.clone(), torch.zeros_like(w)
    lr, wd, b1, b2 = 0.01, 0.1, 0.9, 0.99
    state = fm.ForgeParamState.create(w, "lion", dict(lr=lr, weight_decay=wd, betas=(b1, b2)))
    g_ = state.rule.make_group(lr=lr, weight_decay=wd, betas=(b1, b2))
    for _ in range(STEPS):
        dy, x = grid_tensor(3, 8, generator=gen), grid_tensor(3, 64, generator=gen)
        grad = dy.t() @ x
        update = (b1 * m + (1 - b1) * grad).sign()
        ref_w = ref_w * (1 - lr * wd) - lr * update
        m = b2 * m + (1 - b2) * grad
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g_), backend="torch")
    assert_close_verbose(w, ref_w, rtol=1e-6, atol=1e-6, what="lion")
