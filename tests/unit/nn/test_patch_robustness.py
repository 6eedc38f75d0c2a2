"""patch() where a training loop leaves the happy path: bad batches, raised errors,
discarded gradients, input-only backward passes, writes to the weights, odd arguments.

Each test is a user's loop on a small model (torch backend, CPU) compared with what
torch.optim does, or with the same loop that never left the happy path.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from forge_mcore.models import build_model
from forge_mcore.nn import patch
from tests.unit.nn.reference import batches, train

X = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))


def _mlp(norm: bool = False, seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    middle = nn.LayerNorm(32) if norm else nn.GELU()
    return nn.Sequential(nn.Linear(16, 32), middle, nn.Linear(32, 4))


def _loss(model: nn.Module, x: torch.Tensor = X) -> torch.Tensor:
    return model(x).pow(2).mean()


def _params(model: nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters()}


@pytest.mark.parametrize("clip", ["previous", "exact"])
def test_a_nonfinite_batch_does_not_poison_the_clip_coefficient(clip):
    model = _mlp(norm=True)  # the LayerNorm is a fallback tensor: its gradient is NaN on the bad batch
    opt = patch(model, rule="adamw", state_dtype="fp32", clip=clip, probe_inputs=(X,))
    norms, reports = [], []
    for step in range(4):
        hook = model[1].weight.register_hook(lambda g: g * float("nan")) if step == 1 else None
        _loss(model).backward()
        if hook is not None:
            hook.remove()
        norms.append(opt.clip_grad_norm_(1.0).item())
        opt.step()
        reports.append(opt.nonfinite_report())
        opt.zero_grad()
    assert not torch.isfinite(torch.tensor(norms[1])), "the returned norm must show the bad batch"
    assert reports[1] and not reports[2] and not reports[3]
    for name, p in model.named_parameters():
        assert torch.isfinite(p).all(), f"{name} became non-finite after a skipped batch"
    assert all(torch.isfinite(torch.tensor(norms[2:])))


def test_raise_mode_ends_the_iteration_so_training_can_go_on():
    model, ref = _mlp(), _mlp()
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", on_nonfinite="raise", probe_inputs=(X,))
    ref_opt = patch(ref, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", probe_inputs=(X,))
    nan = X.clone()
    nan[0, 0] = float("nan")
    _loss(model, nan).backward()
    with pytest.raises(FloatingPointError, match="non-finite"):
        opt.step()
    opt.zero_grad()
    ref_opt.step()  # the reference's skipped iteration, so both are at the same step count
    for _ in range(2):  # a later batch trains normally, and like a run that skipped the bad one
        for m, o in ((model, opt), (ref, ref_opt)):
            _loss(m).backward()
            o.step()
            o.zero_grad()
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        assert torch.equal(a, b), name


def test_a_backward_that_raises_counts_nothing():
    """A bad hyperparameter is found inside backward: the retried iteration steps as usual."""
    clean, retried = _mlp(), _mlp()
    opts = [patch(m, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", probe_inputs=(X,)) for m in (clean, retried)]
    opts[1].param_groups[0]["lr"] = -0.1
    with pytest.raises(ValueError, match="lr"):
        _loss(retried).backward()
    opts[1].param_groups[0]["lr"] = 0.1
    opts[1].zero_grad()
    for model, opt in zip((clean, retried), opts):
        _loss(model).backward()
        opt.step()
        opt.zero_grad()
    for (name, a), b in zip(clean.named_parameters(), retried.parameters()):
        assert torch.equal(a, b), name
    assert all(h.accum is None and h.micro_batches == 0 for h in opts[1].engine.managed)


def test_input_only_backward_leaves_the_weights_alone():
    model, plain = _mlp(), _mlp()
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", probe_inputs=(X,))
    x = X.clone().requires_grad_()
    before = _params(model)
    (grad,) = torch.autograd.grad(_loss(model, x), x)  # saliency, gradient penalties, adversarial inputs
    (expected,) = torch.autograd.grad(_loss(plain, x), x)
    torch.testing.assert_close(grad, expected, rtol=0, atol=0)
    x.grad = None
    _loss(model, x).backward(inputs=[x])
    torch.testing.assert_close(x.grad, expected, rtol=0, atol=0)
    for name in ("weight", "bias"):
        with pytest.raises(RuntimeError, match=f"^0.{name}: torch.autograd.grad with respect to a FORGE-fused"):
            torch.autograd.grad(_loss(model), [getattr(model[0], name)])
    for name, p in model.named_parameters():
        assert torch.equal(p, before[name]), f"{name} was stepped by a backward that did not ask for it"
    opt.step()  # the iteration still has its full backward to come
    _loss(model).backward()
    opt.step()
    assert not torch.equal(model[0].weight, before["0.weight"])


class _DetachedRead(nn.Module):
    def __init__(self, saved: bool):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.e, self.saved = nn.Linear(8, 8), nn.Linear(8, 8), saved

    def forward(self, x):
        h = self.a(x)
        if self.saved:  # the matmul saves e.weight's storage for a's gradient
            return self.e(h) + h @ self.e.weight.detach().t()
        return self.e(h) * self.e.weight.detach().abs().mean()  # only a new tensor is saved


def test_a_detached_read_saved_for_backward_is_not_fused():
    x = torch.randn(4, 8)
    model, ref = _DetachedRead(saved=True), _DetachedRead(saved=True)
    opt = patch(model, rule="sgd", lr=0.5, state_dtype="fp32", clip="none", probe_inputs=(x,))
    assert "outside autograd" in opt.report.not_fused["e.weight"]
    assert opt.report.fused == ["a.weight", "a.bias"]
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    for m, o in ((model, opt), (ref, ref_opt)):
        m(x).pow(2).sum().backward()
        o.step()
        o.zero_grad()
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6, msg=name)
    unsaved = patch(_DetachedRead(saved=False), rule="sgd", clip="none", probe_inputs=(x,))
    assert "e.weight" in unsaved.report.fused


def test_a_master_weight_follows_writes_to_the_weight():
    model = _mlp().bfloat16()
    x = X.bfloat16()
    opt = patch(model, rule="adamw", lr=1e-4, weight_store="fp32_master", clip="none", probe_inputs=(x,))
    model.load_state_dict({k: torch.full_like(v, 0.5) for k, v in model.state_dict().items()})
    _loss(model, x).float().backward()
    opt.step()
    assert (model[0].weight.float() - 0.5).abs().max() < 1e-2, "the step started from the replaced weights"


def test_reloading_a_consistent_checkpoint_keeps_the_master_bits():
    runs = []
    for reload in (False, True):
        model = _mlp().bfloat16()
        x = X.bfloat16()
        opt = patch(model, rule="adamw", lr=1e-2, weight_store="fp32_master", clip="none", probe_inputs=(x,))
        for step in range(3):
            if reload and step == 2:
                model.load_state_dict(model.state_dict())  # bumps the versions, leaves the values
            _loss(model, x).float().backward()
            opt.step()
        runs.append((_params(model), [h.state.master.clone() for h in opt.engine.managed]))
    for name in runs[0][0]:
        assert torch.equal(runs[0][0][name], runs[1][0][name]), name
    assert all(torch.equal(a, b) for a, b in zip(runs[0][1], runs[1][1]))


def test_zero_grad_discards_deferred_gradients_like_torch():
    model, ref = _mlp(norm=True), _mlp(norm=True)
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip="exact", probe_inputs=(X,))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for m, o in ((model, opt), (ref, ref_opt)):
        (_loss(m) * 1000).backward()
        o.zero_grad()  # a batch the loop decided to drop
        _loss(m).backward()
        o.step()
        o.zero_grad()
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7, msg=name)


def test_zero_grad_between_micro_batches_drops_the_earlier_ones():
    dropped, fresh = _mlp(), _mlp()
    opts = [patch(m, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", grad_accumulation=2, probe_inputs=(X,))
            for m in (dropped, fresh)]
    (_loss(dropped) * 1000).backward()
    opts[0].zero_grad()
    for model, opt in zip((dropped, fresh), opts):
        _loss(model, X[:4]).backward()
        _loss(model, X[4:]).backward()
        opt.step()
    for (name, a), b in zip(dropped.named_parameters(), fresh.parameters()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("clip", ["exact", "previous"])
def test_a_second_clip_call_composes_like_torch(clip):
    """clip to 0.1, then ask for the norm (max_norm=inf, a common logging idiom)."""
    model, once = _mlp(norm=True), _mlp(norm=True)
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip=clip, probe_inputs=(X,))
    opt_once = patch(once, rule="sgd", lr=0.1, state_dtype="fp32", clip=clip, probe_inputs=(X,))
    ref = _mlp(norm=True)
    _loss(ref).backward()
    ref_norms = [torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.1).item(),
                 torch.nn.utils.clip_grad_norm_(ref.parameters(), float("inf")).item()]
    for step in range(2):
        _loss(model).backward()
        norms = [opt.clip_grad_norm_(0.1).item(), opt.clip_grad_norm_(float("inf")).item()]
        if clip == "exact" and step == 0:
            assert norms == pytest.approx(ref_norms, rel=1e-5)
        opt.step()
        opt.zero_grad()
        _loss(once).backward()
        opt_once.clip_grad_norm_(0.1)
        opt_once.step()
        opt_once.zero_grad()
    for (name, a), b in zip(model.named_parameters(), once.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7, msg=name)


def test_exclude_takes_one_pattern_or_several():
    def model():
        m = nn.Sequential()
        m.add_module("body", nn.Linear(16, 16))
        m.add_module("head", nn.Linear(16, 4))
        return m

    assert patch(model(), clip="none", probe_inputs=(X,), exclude="head").report.fused == ["body.weight", "body.bias"]
    assert patch(model(), clip="none", probe_inputs=(X,), exclude=["he*"]).report.fused == ["body.weight", "body.bias"]
    with pytest.raises(TypeError, match="exclude"):
        patch(model(), clip="none", probe_inputs=(X,), exclude=[nn.Linear])


def test_backends_are_checked_by_patch_before_the_model_is_touched(monkeypatch):
    model = _mlp()
    classes = [type(m) for m in model.modules()]
    with pytest.raises(ValueError, match="backend must be 'auto', 'triton' or 'torch', got 'cuda'"):
        patch(model, clip="none", backend="cuda", probe_inputs=(X,))
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    lm = build_model("qwen3-tiny")
    with pytest.raises(ValueError, match="loss_backend='triton'.*TRITON_INTERPRET=1"):
        patch(lm, clip="none", fused_loss=True, loss_backend="triton")
    assert [type(m) for m in model.modules()] == classes
    assert "_forge_patch" not in lm.__dict__


def test_optimizer_state_dict_hooks_run_as_torchs():
    opt = patch(_mlp(), rule="adamw", clip="none", probe_inputs=(X,))
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("save pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append(("load pre", sd.pop("extra"))))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load post"))
    saved = opt.state_dict()
    assert saved["extra"] == 1
    opt.load_state_dict(saved)
    assert calls == ["save pre", ("load pre", 1), "load post"] and "extra" in saved  # the caller's dict is kept


def test_summary_states_what_accumulation_buffers_cost():
    opt = patch(_mlp().bfloat16(), rule="adamw", clip="none", grad_accumulation=4, probe_inputs=(X.bfloat16(),))
    line = next(s for s in opt.summary().splitlines() if s.startswith("gradient bytes"))
    assert "fp32 accumulation buffers of grad_accumulation=4 take" in line and "(net -" in line


def test_a_dtype_or_a_tensor_where_a_name_or_number_goes_is_refused_with_the_fix():
    with pytest.raises(TypeError, match=r"one of \['bf16', 'fp32', 'fp8', 'int8'\], got torch.bfloat16"):
        patch(_mlp(), clip="none", state_dtype=torch.bfloat16, probe_inputs=(X,))
    with pytest.raises(TypeError, match=r"pass lr=float\(...\)"):
        patch(_mlp(), clip="none", lr=torch.tensor(1e-3), probe_inputs=(X,))


def test_no_weight_decay_groups_match_torch_param_groups():
    """HF Trainer's recipe: no decay on biases and norms, fused or not."""
    model, ref = _mlp(norm=True), _mlp(norm=True)
    hp = dict(lr=0.05, weight_decay=0.5)
    opt = patch(model, rule="adamw", state_dtype="fp32", clip="none", no_weight_decay=["*bias", "1.*"],
                probe_inputs=(X,), **hp)
    assert sorted(g["weight_decay"] for g in opt.param_groups) == [0.0, 0.0, 0.5]  # engine: both; the norm: quiet
    names = dict(ref.named_parameters())
    quiet = ["0.bias", "1.weight", "1.bias", "2.bias"]
    ref_opt = torch.optim.AdamW([{"params": [names["0.weight"], names["2.weight"]]},
                                 {"params": [names[n] for n in quiet], "weight_decay": 0.0}], **hp)
    for _ in range(3):
        for m, o in ((model, opt), (ref, ref_opt)):
            _loss(m).backward()
            o.step()
            o.zero_grad()
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6, msg=name)
    with pytest.raises(ValueError, match=r"no_weight_decay=\['norm'\] matches no trainable parameter"):
        patch(_mlp(norm=True), clip="none", no_weight_decay="norm", probe_inputs=(X,))
    no_biases = nn.Sequential(nn.Linear(16, 4, bias=False), nn.LayerNorm(4))  # "*bias" alone matches nothing here
    quiet = patch(no_biases, clip="none", no_weight_decay=("*bias", "1.*"), probe_inputs=(X,))
    assert sorted(g["weight_decay"] for g in quiet.param_groups) == [0.0, 0.01]


def test_a_detached_read_inside_activation_checkpointing_is_not_fused():
    """The checkpoint's saved-tensor hook hides what is saved there: a detached read counts anyway."""
    from torch.utils.checkpoint import checkpoint

    class Checkpointed(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = _DetachedRead(saved=True)

        def forward(self, x):
            return checkpoint(self.inner, x, use_reentrant=False)

    x = torch.randn(4, 8)
    opt = patch(Checkpointed(), rule="sgd", clip="none", probe_inputs=(x,))
    assert "outside autograd" in opt.report.not_fused["inner.e.weight"]
    assert "inner.a.weight" in opt.report.fused


def test_a_partial_write_keeps_the_master_bits_of_the_rest():
    model = _mlp().bfloat16()
    x = X.bfloat16()
    opt = patch(model, rule="adamw", lr=1e-2, weight_store="fp32_master", clip="none", probe_inputs=(x,))
    for _ in range(2):
        _loss(model, x).float().backward()
        opt.step()
    handle = next(h for h in opt.engine.managed if h.name == "0.weight")
    master = handle.state.master.clone()
    assert not torch.equal(master, master.bfloat16().float()), "the master must hold bits the weight does not"
    with torch.no_grad():
        model[0].weight[0] = 0.25
    opt.param_groups[0]["lr"] = 0.0  # a step that moves nothing: what remains is the resync
    opt.param_groups[0]["weight_decay"] = 0.0
    _loss(model, x).float().backward()
    opt.step()
    assert torch.equal(handle.state.master[1:], master[1:]) and (handle.state.master[0] == 0.25).all()


def test_a_fallback_mismatch_is_refused_before_the_fused_half_is_loaded():
    saved_model, model = _mlp(norm=True), _mlp(norm=True)
    saved_opt = patch(saved_model, clip="none", no_weight_decay="1.bias", probe_inputs=(X,))
    _loss(saved_model).backward()
    saved_opt.step()
    opt = patch(model, clip="none", probe_inputs=(X,))  # one fallback group where the saved one has two
    with pytest.raises(ValueError, match="fallback optimizer has groups of"):
        opt.load_state_dict(saved_opt.state_dict())
    assert opt.engine.iteration == 0 and all(h.state.step == 0 for h in opt.engine.managed)


def test_previous_mode_returns_a_nonfinite_norm_when_only_fused_tiles_were_skipped():
    model = nn.Sequential(nn.Linear(16, 8), nn.Linear(8, 4))
    opt = patch(model, rule="sgd", lr=0.1, clip="previous", probe_inputs=(X,))
    bad = X.clone()
    bad[0, 0] = float("inf")
    _loss(model, bad).backward()
    assert not torch.isfinite(opt.clip_grad_norm_(1.0))
    opt.step()
    assert opt.nonfinite_report()


def test_moe_experts_accumulate_over_micro_batches_they_were_not_all_routed_in():
    """An expert no token reached in one micro-batch steps from what the others accumulated,
    as the deferred mode (every gradient summed in fp32, stepped at step()) does."""
    from forge_mcore.models import example_batch, training_loss

    runs = []
    for clip, accumulation in (("previous", 2), ("exact", 1)):
        model = build_model("qwen3-moe-tiny", seed=0)
        opt = patch(model, rule="adamw", lr=1e-2, state_dtype="fp32", clip=clip, grad_accumulation=accumulation)
        for step in range(2):
            for micro in range(2):
                batch = example_batch(model, 1, 3, generator=torch.Generator().manual_seed(10 * step + micro))
                (training_loss(model, batch) / 2).backward()
            opt.step()
            opt.zero_grad()
        runs.append(_params(model))
    for name, value in runs[0].items():
        torch.testing.assert_close(value, runs[1][name], rtol=1e-5, atol=1e-6, msg=name)


def test_a_dropped_batch_takes_its_clip_coefficient_with_it():
    """clip="exact": a loop that clips, sees a spike and drops the batch (zero_grad() instead of
    step()) clips and steps the next batch as torch does, with no coefficient of the dropped one."""
    model, ref = _mlp(norm=True), _mlp(norm=True)
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip="exact", probe_inputs=(X,))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    clips = (opt.clip_grad_norm_, lambda n: torch.nn.utils.clip_grad_norm_(ref.parameters(), n))
    norms = []
    for m, o, clip in zip((model, ref), (opt, ref_opt), clips):
        (_loss(m) * 1000).backward()
        assert clip(0.1).item() > 0.1  # the spike
        o.zero_grad()  # a batch the loop decided to drop
        _loss(m).backward()
        norms.append(clip(0.1).item())
        o.step()
        o.zero_grad()
    assert norms[0] == pytest.approx(norms[1], rel=1e-5) and norms[1] > 0.1  # this batch was clipped too
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7, msg=name)


def _train_side_by_side(model, opt, ref, ref_opt, steps=3, x=X):
    for m, o in ((model, opt), (ref, ref_opt)):
        for _ in range(steps):
            _loss(m, x).backward()
            o.step()
            o.zero_grad()
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)


class _Doubled(nn.Linear):
    """A Linear subclass that reads its weight its own way: patch() must keep its forward."""

    def forward(self, x):
        return nn.functional.linear(x, 2 * self.weight, self.bias)


def test_a_subclass_of_nn_linear_is_left_to_the_fallback():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), _Doubled(32, 4))
    ref = copy.deepcopy(model)
    opt = patch(model, rule="adamw", lr=0.05, weight_decay=0.1, state_dtype="fp32", clip="none", probe_inputs=(X,))
    assert sorted(opt.report.fused) == ["0.bias", "0.weight"]
    assert type(model[2]) is _Doubled
    _train_side_by_side(model, opt, ref, torch.optim.AdamW(ref.parameters(), lr=0.05, weight_decay=0.1))


class _BiasReadTwice(nn.Module):
    """``lin.bias`` is read again outside ``lin``: the weight is fused, the bias left to the fallback."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin, self.out = nn.Linear(16, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.out(torch.tanh(self.lin(x)) + self.lin.bias)


def test_an_unfused_bias_of_a_fused_layer_gets_its_gradient_summed_over_tokens():
    model, ref = _BiasReadTwice(), _BiasReadTwice()
    x = X.view(2, 4, 16)  # 3-D: the bias gradient sums over batch and sequence
    opt = patch(model, rule="sgd", lr=0.1, state_dtype="fp32", clip="none", probe_inputs=(x,))
    assert "lin.weight" in opt.report.fused and "outside its module" in opt.report.not_fused["lin.bias"]
    _train_side_by_side(model, opt, ref, torch.optim.SGD(ref.parameters(), lr=0.1), x=x)


@pytest.mark.parametrize("frozen", ["weight", "bias"])
def test_a_parameter_frozen_after_patch_stops_training_and_the_rest_of_its_layer_goes_on(frozen):
    """``requires_grad_(False)`` on a fused layer's weight or bias after patch(): that parameter stays
    as it is (torch's optimizers skip a parameter without a gradient, weight decay included), the
    other one trains as under torch. (Before: a frozen weight's fused bias was never stepped again,
    and a frozen fused bias went on being stepped.)"""
    model, ref = _mlp(), _mlp()
    opt = patch(model, rule="adamw", lr=0.05, weight_decay=0.1, state_dtype="fp32", clip="none", probe_inputs=(X,))
    assert {"0.weight", "0.bias"} <= set(opt.report.fused)
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=0.05, weight_decay=0.1)
    before = _params(model)
    for m in (model, ref):
        getattr(m[0], frozen).requires_grad_(False)
    _train_side_by_side(model, opt, ref, ref_opt, steps=2)
    assert torch.equal(getattr(model[0], frozen), before[f"0.{frozen}"])
    other = "bias" if frozen == "weight" else "weight"
    assert not torch.equal(getattr(model[0], other), before[f"0.{other}"]), f"0.{other} did not train"


def test_experts_frozen_after_patch_are_not_decayed():
    """A fused expert no token reached still decays (step_when_unused), as its slice of torch's 3-D
    gradient is zeros; once its parameter is frozen after patch(), torch skips it, and so does FORGE."""
    model = build_model("qwen3-moe-tiny")
    opt = patch(model, state_dtype="fp32", clip="none", lr=0.01, weight_decay=0.1)
    experts = model.model.layers[0].mlp.experts
    assert "model.layers.0.mlp.experts.down_proj" in opt.report.fused
    experts.down_proj.requires_grad_(False)
    before = experts.down_proj.detach().clone()
    train(model, opt, batches(model, 2))
    assert torch.equal(experts.down_proj, before)
    assert experts.down_proj.grad is None


def test_the_probe_leaves_batchnorm_statistics_and_the_rng_alone():
    """patch()'s probe forward runs in train mode: it must neither update BatchNorm's running
    statistics nor draw dropout masks from the global generator."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32, bias=False), nn.BatchNorm1d(32), nn.Dropout(0.3), nn.Linear(32, 4))
    ref = copy.deepcopy(model)
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=0.05)
    torch.manual_seed(7)
    opt = patch(model, rule="adamw", lr=0.05, state_dtype="fp32", clip="none", probe_inputs=(X + 1,))
    assert sorted(opt.report.fused) == ["0.weight", "3.bias", "3.weight"]
    for m, o in ((model, opt), (ref, ref_opt)):
        if m is ref:
            torch.manual_seed(7)  # where the patched run's dropout masks start, if the probe drew none
        for _ in range(2):
            _loss(m).backward()
            o.step()
            o.zero_grad()
    for (name, a), b in [*zip(model.named_parameters(), ref.parameters()), *zip(model.named_buffers(), ref.buffers())]:
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
