"""forge_mcore.patch(): FORGE on whole models against torch.optim.AdamW (torch backend, fp32)."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.checkpoint import checkpoint

import forge_mcore.nn.manager as manager
from forge_mcore.models import build_model, training_loss
from forge_mcore.nn import ForgeLinear, ForgeOptimizer, patch, unpatch
from tests.unit.nn.reference import (
    HP,
    assert_states_close,
    assert_weights_close,
    batches,
    noise_only_coordinates,
    train,
)


def _schedule(step: int) -> float:
    return 1.0 / (1.0 + 0.1 * step)


@pytest.mark.parametrize("name", ["qwen3-tiny", "gpt2-tiny", "mixer-tiny", "llama-tiny", "vit-tiny"])
def test_trains_like_torch_adamw_for_20_steps(name):
    ref, model = build_model(name), build_model(name)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    data = batches(ref, 20)
    skip = noise_only_coordinates(ref, data)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = patch(model, state_dtype="fp32", clip="none", **HP)
    assert isinstance(opt, torch.optim.Optimizer)
    ref_losses = train(ref, ref_opt, data, scheduler=LambdaLR(ref_opt, _schedule))
    losses = train(model, opt, data, scheduler=LambdaLR(opt, _schedule))  # the engine reads the scheduled lr

    assert losses == pytest.approx(ref_losses, rel=1e-5)
    assert_weights_close(ref, model, rtol=1e-5, what=name, skip=skip)
    assert_states_close(ref, ref_opt, opt, rtol=1e-5, skip=skip)
    for handle in opt.engine.managed:
        assert handle.param.grad is None, f"{handle.name} received a .grad"
        moved = (handle.param - initial[handle.name]).abs().max()
        assert moved > 1e-3 or skip[handle.name].all(), f"{handle.name} did not train"
    assert opt.report.coverage > 0.75


class _Toy(nn.Module):
    """Every kind of weight patch() must leave alone, beside two it must fuse."""

    V, D, H = 11, 12, 13

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(self.V, self.D)
        self.first = nn.Linear(5, self.D)  # its input never requires grad
        self.inp = nn.Linear(self.D, self.H)
        self.frozen = nn.Linear(self.H, self.H).requires_grad_(False)
        self.reused = nn.Linear(self.H, self.H)
        self.bypassed = nn.Linear(self.H, self.H)
        self.functional = nn.Linear(self.H, self.H)
        self.never = nn.Linear(self.H, self.H)
        self.out = nn.Linear(self.H, self.D)
        self.head = nn.Linear(self.D, self.V, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids, feats, labels):
        x = self.inp(self.embed(ids) + self.first(feats))
        x = torch.tanh(self.frozen(x))
        x = self.reused(torch.tanh(self.reused(x)))
        x = x + F.linear(x, self.bypassed.weight, self.bypassed.bias)
        x = self.functional(x) + 0.5 * F.linear(x, self.functional.weight)
        logits = self.head(self.out(x))
        return F.cross_entropy(logits.reshape(-1, self.V), labels.reshape(-1))


def _toy_batches(n, seed=3):
    gen = torch.Generator().manual_seed(seed)
    return [dict(ids=torch.randint(0, _Toy.V, (2, 7), generator=gen), feats=torch.randn(2, 7, 5, generator=gen),
                 labels=torch.randint(0, _Toy.V, (2, 7), generator=gen)) for _ in range(n)]


def test_tied_frozen_reused_bypassed_and_functional_weights_stay_unfused():
    torch.manual_seed(0)
    ref = _Toy()
    model = _Toy()
    model.load_state_dict(ref.state_dict())
    data = _toy_batches(8)
    opt = patch(model, state_dtype="fp32", clip="none", probe_inputs=data[0], **HP)

    assert sorted(opt.report.fused) == ["first.bias", "first.weight", "inp.bias", "inp.weight", "out.bias",
                                        "out.weight"]
    why = opt.report.not_fused
    assert "head.weight" in why["embed.weight"]
    assert why["frozen.weight"] == why["frozen.bias"] == "frozen (requires_grad=False)"
    assert why["reused.weight"] == "module called 2 times per forward"
    assert why["bypassed.weight"].startswith("bypassed")
    assert "outside its module" in why["functional.weight"]
    assert why["functional.bias"] == "its layer's weight is not fused"
    assert why["never.weight"] == "not used in the probe forward"
    assert type(model.inp) is ForgeLinear and type(model.reused) is nn.Linear

    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    loss_fn = lambda m, b: m(**b)  # noqa: E731
    train(ref, ref_opt, data, loss_fn=loss_fn)
    train(model, opt, data, loss_fn=loss_fn)
    assert_weights_close(ref, model, rtol=1e-5, what="toy")
    assert_states_close(ref, ref_opt, opt, rtol=1e-5)
    assert torch.equal(model.frozen.weight, ref.frozen.weight)


def _never_route_to(expert: int):
    """Router forward hook: expert ``expert`` gets no token (the same routing rule otherwise)."""
    def hook(router, _args, out):
        logits = out[0].masked_fill(torch.arange(router.num_experts) == expert, float("-inf"))
        probs = torch.softmax(logits, dim=-1, dtype=torch.float)
        top, idx = torch.topk(probs, router.top_k, dim=-1)
        top = top / top.sum(dim=-1, keepdim=True)
        return logits, top.to(logits.dtype), idx
    return hook


def test_moe_experts_fused_per_expert_and_unrouted_expert_still_decays():
    ref, model = build_model("qwen3-moe-tiny"), build_model("qwen3-moe-tiny")
    for m in (ref, model):
        for layer in m.model.layers:
            layer.mlp.gate.register_forward_hook(_never_route_to(3))
    initial = model.model.layers[0].mlp.experts.down_proj[3].detach().clone()
    data = batches(ref, 8)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = patch(model, state_dtype="fp32", clip="none", **HP)

    assert "model.layers.1.mlp.experts.gate_up_proj" in opt.report.fused
    assert opt.report.coverage >= 0.95
    train(ref, ref_opt, data)
    train(model, opt, data)
    assert_weights_close(ref, model, rtol=1e-5, what="moe")
    assert_states_close(ref, ref_opt, opt, rtol=1e-5)
    unrouted = model.model.layers[0].mlp.experts.down_proj[3]
    assert not torch.equal(unrouted, initial), "the expert without tokens was not decayed"


def _snapshot(model: nn.Module) -> dict:
    return {
        "tensors": {k: v.clone() for k, v in model.state_dict().items()},
        "classes": [type(m) for m in model.modules()],
        "attrs": [sorted(m.__dict__) for m in model.modules()],
        "requires_grad": [p.requires_grad for p in model.parameters()],
        "rng": torch.get_rng_state(),
    }


def _assert_untouched(model: nn.Module, before: dict) -> None:
    after = _snapshot(model)
    assert after["classes"] == before["classes"] and after["attrs"] == before["attrs"]
    assert after["requires_grad"] == before["requires_grad"]
    assert torch.equal(after["rng"], before["rng"])
    assert before["tensors"].keys() == after["tensors"].keys()
    for k, v in before["tensors"].items():
        assert torch.equal(v, after["tensors"][k]), k


@pytest.fixture
def gloo_group(tmp_path):
    torch.distributed.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield
    torch.distributed.destroy_process_group()


def _ddp(model):
    return nn.parallel.DistributedDataParallel(model)


def _fsdp(model):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    return fully_shard(model, mesh=init_device_mesh("cpu", (1,)))


@pytest.mark.parametrize("wrap, match", [(_ddp, "DistributedDataParallel"), (_fsdp, "FSDP")])
def test_refuses_data_parallel_wrappers(gloo_group, wrap, match):
    model = wrap(build_model("mixer-tiny"))
    before = _snapshot(model)
    with pytest.raises(RuntimeError, match=match):
        patch(model, clip="none")
    _assert_untouched(model, before)


def _patched_twice(model):
    patch(model, clip="none")
    return model


@pytest.mark.parametrize("prepare, error, match", [
    (lambda m: m.half(), TypeError, "float16 weights.*bfloat16"),
    (lambda m: torch.compile(m), RuntimeError, "torch.compile"),
    (_patched_twice, RuntimeError, "already patched"),
])
def test_refusals_leave_the_model_untouched(prepare, error, match):
    model = prepare(build_model("mixer-tiny"))
    before = _snapshot(model)
    with pytest.raises(error, match=match):
        patch(model, clip="none")
    _assert_untouched(model, before)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(clip="sometimes"), ValueError, "clip must be one of"),
    (dict(clip="none", learning_rate=1.0), TypeError, "unknown hyperparameter"),
    (dict(clip="none", state_dtype="int4"), ValueError, "int4"),
    (dict(clip="none", rule="lion"), ValueError, "fallback="),
    (dict(clip="none", grad_accumulation=0), ValueError, "grad_accumulation"),
])
def test_bad_arguments_raise_before_touching_the_model(kwargs, error, match):
    model = build_model("mixer-tiny")
    before = _snapshot(model)
    with pytest.raises(error, match=match):
        patch(model, **kwargs)
    _assert_untouched(model, before)


def test_refuses_world_size_above_one(monkeypatch):
    model = build_model("mixer-tiny")
    before = _snapshot(model)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="world size is 2"):
        patch(model, clip="none")
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda *a: 4)
    with pytest.raises(RuntimeError, match="world size is 4"):
        patch(model, clip="none")
    _assert_untouched(model, before)


def test_fp16_autocast_and_grad_scaler_are_refused_before_any_fused_step():
    model = build_model("mixer-tiny")
    opt = patch(model, clip="none")
    (batch,) = batches(model, 1)
    before = _snapshot(model)
    with pytest.raises(RuntimeError, match="float16 autocast"):
        with torch.autocast("cpu", dtype=torch.float16):
            training_loss(model, batch)
    _assert_untouched(model, before)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(training_loss(model, batch)).backward()
    with pytest.raises(RuntimeError, match="GradScaler is not supported"):
        scaler.step(opt)


def test_state_dict_round_trip_continues_bit_identically():
    def make(seed):
        model = build_model("qwen3-tiny", seed=seed)
        opt = patch(model, state_dtype="bf16", clip="previous", **HP)
        return model, opt, LambdaLR(opt, _schedule)

    def clip(opt):
        opt.clip_grad_norm_(0.5)

    model_a, opt_a, sched_a = make(0)
    data = batches(model_a, 6)
    train(model_a, opt_a, data[:3], scheduler=sched_a, before_step=clip)
    buf = io.BytesIO()
    torch.save({"model": model_a.state_dict(), "opt": opt_a.state_dict(), "sched": sched_a.state_dict()}, buf)
    buf.seek(0)
    saved = torch.load(buf, weights_only=False)

    model_b, opt_b, sched_b = make(1)  # different initial weights: everything must come from the checkpoint
    model_b.load_state_dict(saved["model"])
    opt_b.load_state_dict(saved["opt"])
    sched_b.load_state_dict(saved["sched"])
    assert opt_b.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"] != HP["lr"]
    train(model_a, opt_a, data[3:], scheduler=sched_a, before_step=clip)
    train(model_b, opt_b, data[3:], scheduler=sched_b, before_step=clip)
    for (name, a), b in zip(model_a.named_parameters(), model_b.parameters()):
        assert torch.equal(a, b), name
    for ha, hb in zip(opt_a.engine.managed, opt_b.engine.managed):
        for key, value in ha.state.state_tensors().items():
            assert torch.equal(value, hb.state.state_tensors()[key]), (ha.name, key)


def test_exact_accumulation_over_4_micro_batches_equals_the_4x_batch_step():
    big, acc = build_model("qwen3-tiny"), build_model("qwen3-tiny")
    opt_big = patch(big, state_dtype="fp32", clip="none", **HP)
    opt_acc = patch(acc, state_dtype="fp32", clip="none", grad_accumulation=4, **HP)
    for batch in batches(big, 3, batch_size=8):
        training_loss(big, batch).backward()
        opt_big.step()
        opt_big.zero_grad()
        for i in range(4):
            micro = {k: v[2 * i: 2 * i + 2] for k, v in batch.items()}
            (training_loss(acc, micro) / 4).backward()
        opt_acc.step()
        opt_acc.zero_grad()
    assert_weights_close(big, acc, rtol=1e-6, what="accumulated")


def test_second_backward_without_accumulation_raises():
    model = build_model("qwen3-tiny")
    opt = patch(model, clip="none")
    (batch,) = batches(model, 1)
    training_loss(model, batch).backward()
    with pytest.raises(RuntimeError, match="grad_accumulation"):
        training_loss(model, batch).backward()
    assert opt.engine.iteration == 0


def test_create_graph_backward_is_refused_before_any_step():
    model = build_model("qwen3-tiny")
    opt = patch(model, clip="none")
    before = {h.name: h.weight.clone() for h in opt.engine.managed}
    (batch,) = batches(model, 1)
    with pytest.raises(RuntimeError, match="create_graph"):
        training_loss(model, batch).backward(create_graph=True)
    assert all(torch.equal(h.weight, before[h.name]) for h in opt.engine.managed)


class _Checkpointed(nn.Module):
    def __init__(self, inner: nn.Module, use_reentrant: bool):
        super().__init__()
        self.inner, self.use_reentrant = inner, use_reentrant

    def forward(self, x):
        return checkpoint(self.inner, x, use_reentrant=self.use_reentrant)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_activation_checkpointing_composes(use_reentrant):
    def wrap(m):
        m.blocks = nn.ModuleList(_Checkpointed(b, use_reentrant) for b in m.blocks)

    ref, model = build_model("mixer-tiny"), build_model("mixer-tiny")
    wrap(ref)
    if not use_reentrant:
        wrap(model)  # non-reentrant checkpointing runs a normal forward: the probe sees through it
    opt = patch(model, state_dtype="fp32", clip="none", **HP)
    if use_reentrant:
        wrap(model)  # reentrant forwards run under no_grad: enable it after patch()
    assert len(opt.report.fused) == 18
    data = batches(ref, 6)
    skip = noise_only_coordinates(ref, data)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    train(ref, ref_opt, data)
    train(model, opt, data)
    assert_weights_close(ref, model, rtol=1e-5, what="checkpointed", skip=skip)


def _reference_clip_loop(model, data, max_norm, lagged):
    opt = torch.optim.AdamW(model.parameters(), **HP)
    norms, coef = [], None
    for batch in data:
        training_loss(model, batch).backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        norms.append(total.item())
        now = torch.clamp(max_norm / (total + 1e-6), max=1.0)
        scale = now if not lagged else coef
        if scale is not None:
            torch._foreach_mul_(grads, scale)
        coef = now
        opt.step()
        opt.zero_grad()
    return norms


@pytest.mark.parametrize("mode", ["exact", "previous"])
def test_clipping_modes_match_their_definitions(mode):
    ref, model = build_model("gpt2-tiny"), build_model("gpt2-tiny")
    data = batches(ref, 6)
    skip = noise_only_coordinates(ref, data)
    ref_norms = _reference_clip_loop(ref, data, 0.5, lagged=mode == "previous")
    opt = patch(model, state_dtype="fp32", clip=mode, **HP)
    norms = []
    train(model, opt, data, before_step=lambda o: norms.append(o.clip_grad_norm_(0.5).item()))
    assert min(ref_norms) > 0.5, "the test must clip every step"
    assert norms == pytest.approx(ref_norms, rel=1e-5)
    assert_weights_close(ref, model, rtol=1e-5, what=f"clip={mode}", skip=skip)
    assert opt.grad_norm().item() == pytest.approx(ref_norms[-1], rel=1e-5)


def test_clip_none_refuses_clip_grad_norm_and_unset_clip_warns_once(monkeypatch):
    monkeypatch.setattr(manager, "_clip_warned", False)
    with pytest.warns(UserWarning, match="clip_grad_norm_"):
        opt = patch(build_model("mixer-tiny"))
    with pytest.raises(RuntimeError, match="clip='exact'"):
        opt.clip_grad_norm_(1.0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        patch(build_model("mixer-tiny"))


@pytest.mark.parametrize("on_nonfinite", ["skip", "raise"])
def test_nonfinite_gradients_are_skipped_or_raise(on_nonfinite):
    model = build_model("mixer-tiny")
    opt = patch(model, state_dtype="fp32", clip="none", on_nonfinite=on_nonfinite, **HP)
    data = batches(model, 2)
    train(model, opt, data[:1])
    poisoned = model.blocks[1].token_mixing.fc2

    def poison(_m, _args, out):
        out.register_hook(lambda g: g.index_fill(0, torch.tensor([0]), float("nan")))

    hook = poisoned.register_forward_hook(poison)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    training_loss(model, data[1]).backward()
    if on_nonfinite == "raise":
        with pytest.raises(FloatingPointError, match="non-finite gradients in .* fused weight"):
            opt.step()
        return
    opt.step()
    hook.remove()
    report = opt.nonfinite_report()
    # the poisoned layer and everything upstream of it (the stem is a fallback tensor) are skipped
    assert report["blocks.1.token_mixing.fc2.weight"] >= 1 and report["stem.weight"] == 1
    for name in ("blocks.1.token_mixing.fc2.weight", "blocks.0.channel_mixing.fc1.weight", "stem.weight"):
        assert torch.equal(dict(model.named_parameters())[name], before[name]), name
    for name in ("blocks.1.channel_mixing.fc2.weight", "head.weight"):  # downstream: finite, stepped
        assert not torch.equal(dict(model.named_parameters())[name], before[name]), name
    assert "head.weight" not in report


def test_telemetry_matches_the_reference_gradients():
    ref, model = build_model("gpt2-tiny"), build_model("gpt2-tiny")
    (batch,) = batches(ref, 1)
    training_loss(ref, batch).backward()
    opt = patch(model, state_dtype="fp32", clip="none", **HP)
    training_loss(model, batch).backward()
    opt.step()
    norms = opt.grad_norms()
    for name, p in ref.named_parameters():
        assert norms[name] == pytest.approx(p.grad.norm().item(), rel=1e-5), name
    total = torch.nn.utils.get_total_norm([p.grad for p in ref.parameters()])
    assert opt.grad_norm().item() == pytest.approx(total.item(), rel=1e-5)


def test_state_dict_keys_unchanged_and_unpatch_restores_plain_modules():
    model = build_model("gpt2-tiny")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    classes = [type(m) for m in model.modules()]
    opt = patch(model, clip="none")
    assert type(model.transformer.h[0].attn.c_attn).__name__ == "ForgeConv1D"
    after = model.state_dict()
    assert list(after) == list(before) and all(torch.equal(after[k], v) for k, v in before.items())
    summary = opt.summary()
    assert "coverage" in summary and "tied weight" in summary
    assert any(f" {unit}" in summary for unit in ("KiB", "MiB", "GiB"))

    unpatch(model)
    assert [type(m) for m in model.modules()] == classes
    assert not any("_forge_site" in m.__dict__ for m in model.modules())
    (batch,) = batches(model, 1)
    training_loss(model, batch).backward()
    assert model.transformer.h[0].attn.c_attn.weight.grad is not None  # a plain module again
    with pytest.raises(RuntimeError, match="unpatched"):
        opt.step()
    assert isinstance(patch(model, clip="none"), ForgeOptimizer)  # and patchable again


def test_other_rules_use_their_torch_twin_or_the_given_fallback_and_exclude_is_honoured():
    sgd = dict(lr=0.05, momentum=0.9, weight_decay=0.01)
    ref, model = build_model("mixer-tiny"), build_model("mixer-tiny")
    built = []

    def fallback(groups):
        built.append(groups)
        return torch.optim.SGD(groups)

    opt = patch(model, "sgd", "fp32", clip="none", fallback=fallback, exclude=["head"], **sgd)
    assert opt.report.not_fused["head.weight"] == "excluded by patch(exclude=...)"
    assert any(p is model.head.weight for p in built[0][0]["params"])
    data = batches(ref, 5)
    skip = noise_only_coordinates(ref, data)
    train(ref, torch.optim.SGD(ref.parameters(), **sgd), data)
    train(model, opt, data)
    assert_weights_close(ref, model, rtol=1e-5, what="sgd", skip=skip)


def test_frozen_bottom_layers_of_a_moe_are_left_alone_and_the_rest_trains_like_torch():
    """The usual "freeze the embeddings and the first layers" recipe: layer 0's experts then see
    an input that needs no gradient, so no autograd node reads or saves their weights."""
    ref, model = build_model("qwen3-moe-tiny"), build_model("qwen3-moe-tiny")
    for m in (ref, model):
        m.model.embed_tokens.requires_grad_(False)
        m.model.layers[0].requires_grad_(False)
    data = batches(ref, 4)
    ref_opt = torch.optim.AdamW([p for p in ref.parameters() if p.requires_grad], **HP)
    opt = patch(model, state_dtype="fp32", clip="none", **HP)
    for attr in ("gate_up_proj", "down_proj"):
        assert opt.report.not_fused[f"model.layers.0.mlp.experts.{attr}"] == "frozen (requires_grad=False)"
        assert f"model.layers.1.mlp.experts.{attr}" in opt.report.fused
    frozen = {n: p.detach().clone() for n, p in model.model.layers[0].named_parameters()}
    train(ref, ref_opt, data)
    train(model, opt, data)
    assert_weights_close(ref, model, rtol=1e-5, what="frozen bottom")
    assert_states_close(ref, ref_opt, opt, rtol=1e-5)
    for name, p in model.model.layers[0].named_parameters():
        assert torch.equal(p, frozen[name]), name
