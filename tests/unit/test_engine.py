"""ForgeEngine: groups, micro-batch accumulation, deferred steps, telemetry, persistence.

Runs on the torch backend (the same engine drives the Triton path on GPU;
kernel parity is test_fused_kernel.py's job).
"""

from __future__ import annotations

import pytest
import torch

from forge_mcore.engine import ForgeEngine
from tests.helpers import assert_close_verbose, grid_tensor

OUT, IN = 40, 70


def _engine(n_weights=2, **kw):
    engine = ForgeEngine(kw.pop("rule", "adamw"), kw.pop("state_dtype", "fp32"), **kw)
    group = engine.add_param_group({"lr": 0.01, "weight_decay": 0.1})
    gen = torch.Generator().manual_seed(0)
    handles = []
    for i in range(n_weights):
        p = torch.nn.Parameter(torch.randn(OUT, IN, generator=gen))
        handles.append(engine.manage(f"w{i}", p.data, p, group))
    return engine, group, handles


def _batches(n, bt, seed=1):
    gen = torch.Generator().manual_seed(seed)
    return [(grid_tensor(bt, OUT, generator=gen), grid_tensor(bt, IN, generator=gen)) for _ in range(n)]


def test_matches_torch_adamw_and_reads_lr_each_backward():
    engine, group, (h,) = _engine(1)
    ref = torch.nn.Parameter(h.weight.clone())
    opt = torch.optim.AdamW([ref], lr=0.01, weight_decay=0.1)
    for i, (dy, x) in enumerate(_batches(5, 9)):
        group["lr"] = opt.param_groups[0]["lr"] = 0.01 / (i + 1)  # a schedule edits the group
        engine.backward(h, dy, x)
        engine.step()
        ref.grad = (dy.double().t() @ x.double()).float()
        opt.step()
    assert_close_verbose(h.weight, ref.detach(), rtol=1e-6, atol=1e-6, what="weight")


def test_exact_accumulation_equals_one_large_batch():
    batches = _batches(4, 8)
    big_dy = torch.cat([b[0] for b in batches])
    big_x = torch.cat([b[1] for b in batches])
    acc_engine, _, (ha,) = _engine(1, grad_accumulation=4)
    one_engine, _, (hb,) = _engine(1)
    for dy, x in batches:
        acc_engine.backward(ha, dy, x)
    acc_engine.step()
    one_engine.backward(hb, big_dy, big_x)
    one_engine.step()
    assert ha.accum is None
    assert_close_verbose(ha.weight, hb.weight, rtol=1e-6, atol=1e-7, what="accumulated vs large batch")


def test_second_backward_without_accumulation_raises():
    engine, _, (h,) = _engine(1)
    (dy, x), = _batches(1, 4)
    engine.backward(h, dy, x)
    before = h.weight.clone()
    with pytest.raises(RuntimeError, match="second backward"):
        engine.backward(h, dy, x)
    assert torch.equal(before, h.weight)


def test_step_before_all_micro_batches_raises():
    engine, _, (h,) = _engine(1, grad_accumulation=3)
    (dy, x), = _batches(1, 4)
    engine.backward(h, dy, x)
    with pytest.raises(RuntimeError, match="1 of 3 micro-batches"):
        engine.step()


def test_deferred_mode_equals_immediate_and_applies_scale():
    batches = _batches(3, 6)
    imm, _, (hi,) = _engine(1, rule="sgd")
    dfr, _, (hd,) = _engine(1, rule="sgd", deferred=True)
    for dy, x in batches:
        imm.backward(hi, dy, x)
        imm.step()
        dfr.backward(hd, dy, x)
        g = hd.accum.clone()
        assert_close_verbose(dfr.per_tensor_sumsq().sum(), (g.double() ** 2).sum().float(), rtol=1e-6)
        dfr.step()
    assert_close_verbose(hd.weight, hi.weight, rtol=1e-6, atol=1e-7, what="deferred vs immediate")
    # a grad scale of 0 turns the SGD step into pure weight decay
    dfr.grad_scale = torch.zeros(1)
    before = hd.weight.clone()
    dy, x = batches[0]
    dfr.backward(hd, dy, x)
    dfr.step()
    assert_close_verbose(hd.weight, before - 0.01 * 0.1 * before, rtol=1e-6, atol=1e-7, what="scaled step")


def test_unused_weight_gets_gradient_free_step_only_when_asked():
    engine = ForgeEngine("adamw", "fp32")
    group = engine.add_param_group({"lr": 0.01, "weight_decay": 0.5})
    p1, p2 = torch.nn.Parameter(torch.ones(OUT, IN)), torch.nn.Parameter(torch.ones(OUT, IN))
    expert = engine.manage("expert", p1.data, p1, group, step_when_unused=True)
    plain = engine.manage("plain", p2.data, p2, group)
    engine.step()
    assert torch.allclose(expert.weight, torch.full_like(expert.weight, 1 - 0.01 * 0.5))
    assert torch.equal(plain.weight, torch.ones(OUT, IN))


def test_telemetry_and_nonfinite_guard():
    engine, _, (h0, h1) = _engine(2, on_nonfinite="raise")
    (dy, x), = _batches(1, 5)
    engine.backward(h0, dy, x)
    bad_dy = dy.clone()
    bad_dy[0, 0] = float("nan")
    before = h1.weight.clone()
    engine.backward(h1, bad_dy, x)
    assert torch.equal(h1.weight[:1], before[:1])  # the poisoned row's tiles did not move
    expected = float((dy.double().t() @ x.double()).pow(2).sum())
    assert abs(engine.grad_sumsq().item() - expected) <= 1e-5 * expected + 1e-3
    with pytest.raises(FloatingPointError, match="w1"):
        engine.step()
    assert engine.nonfinite_report()["w1"] >= 1
    assert "w0" in engine.per_tensor_norms()


def test_state_dict_round_trip_continues_identically():
    engine_a, _, (ha,) = _engine(1, state_dtype="int8")
    batches = _batches(6, 7)
    for dy, x in batches[:3]:
        engine_a.backward(ha, dy, x)
        engine_a.step()
    sd = engine_a.state_dict()
    engine_b, _, (hb,) = _engine(1, state_dtype="int8")
    hb.weight.copy_(ha.weight)
    engine_b.load_state_dict(sd)
    for dy, x in batches[3:]:
        for eng, h in ((engine_a, ha), (engine_b, hb)):
            eng.backward(h, dy, x)
            eng.step()
    assert torch.equal(ha.weight, hb.weight)
    for a, b in zip(ha.state.slots, hb.state.slots):
        if a is not None:
            assert torch.equal(a.data, b.data) and torch.equal(a.scale, b.scale)


@pytest.mark.parametrize("state_dtype", ["int8", "fp8", "bf16"])
def test_a_codes_version_1_state_dict_loads_exactly(state_dtype):
    """A state_dict from before codes_version 2 (no key; codes M x N in column order) loads into
    today's layout (block codecs: whole blocks; int8: fragment order) bit for bit; an unknown version
    is refused before anything is written."""
    import forge_mcore as fm

    gen = torch.Generator().manual_seed(0)
    w = torch.randn(5, 133, generator=gen)  # two whole 64-column blocks and a partial one
    saved = fm.ForgeParamState.create(w, "adamw", {"lr": 0.01}, state_dtype)
    for slot in saved.slots:
        if slot is not None:
            x = torch.randn(5, 133, generator=gen)
            x[3] = 0.0  # a row of flushed blocks
            saved.codec.encode_(slot, x.abs() if slot.nonnegative else x)
    sd = saved.state_dict()
    assert sd.pop("codes_version") == 2
    sd["states"] = {name: dict(entry, data=saved.codec.codes(saved.slots[spec.slot])[:, :133]
                               if saved.codec.block else entry["data"])
                    for (name, entry), spec in zip(sd["states"].items(), saved.specs)}
    loaded = fm.ForgeParamState.create(w, "adamw", {"lr": 0.01}, state_dtype)
    loaded.load_state_dict(sd)
    for a, b in zip(saved.slots, loaded.slots):
        if a is not None:
            assert torch.equal(a.data.view(torch.uint8), b.data.view(torch.uint8)), "codes differ"
            assert a.scale is None or torch.equal(a.scale, b.scale)
    fresh = fm.ForgeParamState.create(w, "adamw", {"lr": 0.01}, state_dtype)
    with pytest.raises(ValueError, match="codes_version 3"):
        fresh.load_state_dict(dict(saved.state_dict(), codes_version=3))
    assert all(not s.data.view(torch.uint8).any() for s in fresh.slots if s is not None)


def test_bad_configuration_raises():
    with pytest.raises(ValueError, match="grad_accumulation"):
        ForgeEngine(grad_accumulation=0)
    with pytest.raises(ValueError, match="on_nonfinite"):
        ForgeEngine(on_nonfinite="ignore")
    with pytest.raises(ValueError, match="accumulation_dtype"):
        ForgeEngine(accumulation_dtype="fp16")
    engine = ForgeEngine()
    with pytest.raises(TypeError, match="unknown hyperparameter"):
        engine.add_param_group({"learning_rate": 1.0})


def test_groups_carry_scheduler_keys_and_identical_groups_stay_distinct():
    engine = ForgeEngine("adamw", "fp32")
    groups = [engine.add_param_group({"lr": 0.01}) for _ in range(2)]
    for g in groups:  # megatron's OptimizerParamScheduler and torch's schedulers add keys of their own
        g.update(max_lr=0.01, min_lr=0.0, wd_mult=1.0, initial_lr=0.01)
    params = [torch.nn.Parameter(torch.ones(OUT, IN)) for _ in range(2)]
    for i, (p, g) in enumerate(zip(params, groups)):
        engine.manage(f"w{i}", p.data, p, g)
    assert [g["params"] for g in groups] == [[params[0]], [params[1]]]


def test_per_weight_grad_scale_multiplies_the_gradient_not_the_telemetry():
    (dy, x), = _batches(1, 6)
    scaled, _, _ = _engine(0, rule="sgd")
    plain, _, _ = _engine(0, rule="sgd")
    p1, p2 = torch.nn.Parameter(torch.ones(OUT, IN)), torch.nn.Parameter(torch.ones(OUT, IN))
    hs = scaled.manage("w", p1.data, p1, scaled.param_groups[0], grad_scale=0.5)
    hp = plain.manage("w", p2.data, p2, plain.param_groups[0])
    with pytest.raises(ValueError, match="grad_scale"):
        scaled.manage("bad", p1.data, p1, scaled.param_groups[0], grad_scale=0.0)
    scaled.grad_scale = torch.full((1,), 0.5)  # a clip coefficient composes with it
    scaled.backward(hs, dy, x)
    plain.backward(hp, dy * 0.25, x)
    assert_close_verbose(hs.weight, hp.weight, rtol=1e-6, atol=1e-7, what="grad_scale 0.5 x clip 0.5")
    expected = float((dy.double().t() @ x.double()).pow(2).sum())
    assert abs(scaled.per_tensor_sumsq()[0].item() - expected) <= 1e-5 * expected


def test_per_tensor_sumsq_immediate_and_deferred():
    batches = _batches(2, 5)
    for deferred in (False, True):
        engine, _, handles = _engine(2, deferred=deferred)
        assert torch.equal(engine.per_tensor_sumsq(), torch.zeros(2))
        engine.backward(handles[1], *batches[1])
        g = batches[1][0].double().t() @ batches[1][1].double()
        sumsq = engine.per_tensor_sumsq()
        assert sumsq[0].item() == 0.0
        assert abs(sumsq[1].item() - float(g.pow(2).sum())) <= 1e-5 * float(g.pow(2).sum())


def test_a_rejected_deferred_backward_leaves_nothing_to_step():
    engine, _, (h,) = _engine(1, deferred=True)
    before = h.weight.clone()
    with pytest.raises(ValueError, match="grad_output has 6 features"):
        engine.backward(h, torch.randn(4, 6), torch.randn(4, IN))
    assert h.accum is None and h.micro_batches == 0
    engine.step()
    assert torch.equal(h.weight, before) and h.state.step == 0


def test_current_telemetry_is_the_iterations_in_every_mode():
    (dy, x), = _batches(1, 5)
    g2 = (dy.double().t() @ x.double()).square().sum().float()
    for kw in (dict(deferred=True), {}):
        engine, _, (h,) = _engine(1, rule="sgd", **kw)
        engine.backward(h, dy, x)
        assert_close_verbose(engine.grad_sumsq(current=True), g2, rtol=1e-5, what=f"grad_sumsq {kw}")
        assert engine.per_tensor_norms(current=True)["w0"] == pytest.approx(g2.sqrt().item(), rel=1e-5)


def test_an_engine_state_dict_is_checked_whole_before_any_weight_is_loaded():
    import copy

    engine, _, handles = _engine(2, state_dtype="int8")
    for dy, x in _batches(1, 5):
        for h in handles:
            engine.backward(h, dy, x)
        engine.step()
    saved = engine.state_dict()
    fresh, _, fresh_handles = _engine(2, state_dtype="int8")
    snapshot = copy.deepcopy(fresh.state_dict())
    bad = copy.deepcopy(saved)
    bad["weights"]["w1"]["states"]["exp_avg"]["data"] = torch.zeros(5, 3, dtype=torch.int8)
    with pytest.raises(ValueError, match="w1: state_dict entry exp_avg.data does not match"):
        fresh.load_state_dict(bad)
    missing = copy.deepcopy(saved)
    del missing["iteration"]
    with pytest.raises(ValueError, match="iteration"):
        fresh.load_state_dict(missing)
    after = fresh.state_dict()
    assert after["iteration"] == snapshot["iteration"]
    for name in ("w0", "w1"):
        assert after["weights"][name]["step"] == 0
        for key, entry in after["weights"][name]["states"].items():
            assert torch.equal(entry["data"], snapshot["weights"][name]["states"][key]["data"]), (name, key)


def test_state_dict_round_trip_keeps_the_rules_scalar_state():
    """NAdam carries mu_product from step to step (ForgeParamState.scalars): a resumed engine
    continues with it, bit for bit, and both runs stay on torch.optim.NAdam."""
    engine_a, _, (ha,) = _engine(1, rule="nadam")
    ref = torch.nn.Parameter(ha.weight.clone())
    ref_opt = torch.optim.NAdam([ref], lr=0.01, weight_decay=0.1)
    batches = _batches(6, 7)
    for dy, x in batches[:3]:
        engine_a.backward(ha, dy, x)
        engine_a.step()
    engine_b, _, (hb,) = _engine(1, rule="nadam")
    hb.weight.copy_(ha.weight)
    engine_b.load_state_dict(engine_a.state_dict())
    for dy, x in batches[3:]:
        for eng, h in ((engine_a, ha), (engine_b, hb)):
            eng.backward(h, dy, x)
            eng.step()
    for dy, x in batches:
        ref.grad = (dy.double().t() @ x.double()).float()
        ref_opt.step()
    assert torch.equal(ha.weight, hb.weight)
    assert_close_verbose(hb.weight, ref.detach(), rtol=1e-6, atol=1e-6, what="resumed NAdam vs torch")


def test_a_discarded_deferred_gradient_leaves_the_gradient_free_step_of_an_unused_weight():
    """Deferred mode: zero_grad() drops a weight's materialized gradient, so at step() the weight
    counts as unreached and step_when_unused still decays it, as in an engine that never saw it."""
    (dy, x), = _batches(1, 5)
    start = torch.randn(OUT, IN, generator=torch.Generator().manual_seed(0))
    handles = []
    for discard in (True, False):
        engine = ForgeEngine("adamw", "fp32", deferred=True)
        group = engine.add_param_group({"lr": 0.01, "weight_decay": 0.1})
        p = torch.nn.Parameter(start.clone())
        h = engine.manage("expert", p.data, p, group, step_when_unused=True)
        if discard:
            engine.backward(h, dy, x)
            engine.zero_grad()
        engine.step()
        handles.append(h)
    discarded, unused = handles
    assert_close_verbose(unused.weight, start * (1 - 0.01 * 0.1), rtol=1e-6, atol=1e-7, what="decayed")
    assert torch.equal(discarded.weight, unused.weight)
    assert discarded.state.step == unused.state.step == 1
