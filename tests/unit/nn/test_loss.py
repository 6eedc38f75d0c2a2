"""The LM head fused with its loss (``forge_mcore.nn.loss``, ``patch(fused_loss=True)``)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import forge_mcore.nn.loss as loss_mod
from forge_mcore.engine import ForgeEngine
from forge_mcore.models import build_model, training_loss
from forge_mcore.nn import linear_cross_entropy, patch, unpatch
from tests.unit.nn import reference
from tests.unit.nn.reference import HP, batches, train


@pytest.fixture
def small_blocks(monkeypatch):
    """Vocabulary blocks of 32 rows for the tiny models' 97-entry vocabulary (4 blocks, the last partial)."""
    monkeypatch.setattr(loss_mod, "ROW_MULTIPLE", 8)
    monkeypatch.setattr(loss_mod, "BLOCK_ELEMENTS", 18 * 32)  # 18 tokens per batch of reference.batches


@pytest.mark.parametrize("block_rows", [None, 7, 16])
@pytest.mark.parametrize("num_items", [None, 11.0])
def test_blockwise_loss_and_gradients_equal_cross_entropy_on_the_logits(block_rows, num_items):
    torch.manual_seed(0)
    head = nn.Linear(16, 37, bias=False).double()
    hidden = torch.randn(3, 5, 16, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(0, 37, (3, 5))
    labels[0, 1] = labels[2, 4] = -100
    labels[1, 0] = 36  # the last row of the last (partial) block
    reduction = "mean" if num_items is None else "sum"
    ref = F.cross_entropy(head(hidden).view(-1, 37), labels.view(-1), reduction=reduction) / (num_items or 1)
    ref_grads = torch.autograd.grad(ref, [hidden, head.weight])
    out = linear_cross_entropy(hidden, head, labels, block_rows=block_rows, num_items_in_batch=num_items)
    grads = torch.autograd.grad(out, [hidden, head.weight])
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=0)
    for got, want, what in zip(grads, ref_grads, ("hidden", "weight")):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-14, msg=what)


def test_bad_heads_and_shapes_raise():
    hidden, labels = torch.randn(2, 4, 8), torch.zeros(2, 4, dtype=torch.long)
    with pytest.raises(TypeError, match="bias-free"):
        linear_cross_entropy(hidden, nn.Linear(8, 5), labels)
    with pytest.raises(ValueError, match="disagree"):
        linear_cross_entropy(hidden, nn.Linear(8, 5, bias=False), labels[:, :3])
    with pytest.raises(ValueError, match="positive int"):
        linear_cross_entropy(hidden, nn.Linear(8, 5, bias=False), labels, block_rows=0)
    for bad in (5, -1):
        wrong = labels.clone()
        wrong[1, 2] = bad
        with pytest.raises(RuntimeError, match="outside"):
            linear_cross_entropy(hidden, nn.Linear(8, 5, bias=False), wrong)


@pytest.mark.parametrize("name", ["llama-tiny", "qwen3-tiny"])  # untied head (fused), tied head (not fused)
def test_fused_loss_trains_like_torch_adamw_with_hf_loss(name, small_blocks):
    ref, model = build_model(name), build_model(name)
    data = batches(ref, 12)
    skip = reference.noise_only_coordinates(ref, data)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = patch(model, state_dtype="fp32", clip="none", fused_loss=True, **HP)
    head_fused = "lm_head.weight" in opt.report.fused
    assert head_fused == (not ref.config.tie_word_embeddings)
    ref_losses = train(ref, ref_opt, data)
    losses = train(model, opt, data)
    assert losses == pytest.approx(ref_losses, rel=1e-5)
    # The fused loss sums the cross-entropy gradient in another order than HF's loss, and 12 Adam
    # steps amplify that fp32 rounding on small-gradient coordinates: llama-tiny's k_proj ended at
    # 1.01e-5 on an AVX-512 CPU with torch 2.13 (session 21), under 1e-5 on earlier CI machines.
    reference.assert_weights_close(ref, model, rtol=2e-5, what=name, skip=skip)
    reference.assert_states_close(ref, ref_opt, opt, rtol=2e-5, skip=skip)
    assert model.lm_head.weight.grad is None
    assert "LM head and cross-entropy fused" in opt.summary()


def test_fused_head_in_row_blocks_steps_exactly_as_in_one_piece(small_blocks):
    """int8 states, scales per row block of 64 columns: the row-blocked step of the head writes
    what the unblocked fused step writes."""
    whole, blocked = build_model("llama-tiny"), build_model("llama-tiny")
    opt_whole = patch(whole, state_dtype="int8", clip="none", **HP)
    opt_blocked = patch(blocked, state_dtype="int8", clip="none", fused_loss=True, **HP)
    data = batches(whole, 5)
    assert train(whole, opt_whole, data) == pytest.approx(train(blocked, opt_blocked, data), rel=1e-5)
    (head_whole,) = [h for h in opt_whole.engine.managed if h.name == "lm_head.weight"]
    (head_blocked,) = [h for h in opt_blocked.engine.managed if h.name == "lm_head.weight"]
    assert len(head_blocked.row_views) == 4 and head_blocked.state.step == head_whole.state.step == 5
    torch.testing.assert_close(head_blocked.weight, head_whole.weight, rtol=1e-5, atol=1e-7)
    for key, value in head_whole.state.state_tensors().items():
        torch.testing.assert_close(head_blocked.state.state_tensors()[key], value, rtol=1e-4, atol=1e-9, msg=key)
    assert opt_blocked.grad_norms()["lm_head.weight"] == pytest.approx(opt_whole.grad_norms()["lm_head.weight"],
                                                                       rel=1e-5)


def test_forward_without_labels_or_grad_and_unpatch_keep_the_models_own_forward(small_blocks):
    model = build_model("llama-tiny")
    (batch,) = batches(model, 1)
    with torch.no_grad():
        plain = model(**batch)
    patch(model, clip="none", fused_loss=True)
    with torch.no_grad():
        evaluated = model(**batch)
    assert evaluated.logits is not None and torch.equal(evaluated.logits, plain.logits)
    assert model(input_ids=batch["input_ids"]).logits is not None
    trained = model(**batch)
    assert trained.logits is None and torch.allclose(trained.loss, plain.loss, rtol=1e-6)
    unpatch(model)
    assert "forward" not in model.__dict__ and model(**batch).logits is not None


def test_loss_backend_is_chosen_per_model(small_blocks, monkeypatch):
    """patch(loss_backend=...) binds the fused loss's backend to that model: one model on the
    kernels, one on torch ops, trained side by side in one process, as the benchmark does."""
    calls = []
    kernel = loss_mod.block_stats
    monkeypatch.setattr(loss_mod, "block_stats", lambda *a, **k: calls.append(1) or kernel(*a, **k))
    on_kernels, on_torch = build_model("llama-tiny"), build_model("llama-tiny")
    opt_kernels = patch(on_kernels, state_dtype="fp32", clip="none", fused_loss=True, loss_backend="triton", **HP)
    opt_torch = patch(on_torch, state_dtype="fp32", clip="none", fused_loss=True, loss_backend="torch", **HP)
    data = batches(on_torch, 3)
    losses_torch = train(on_torch, opt_torch, data)
    assert not calls
    assert train(on_kernels, opt_kernels, data) == pytest.approx(losses_torch, rel=1e-5)
    assert len(calls) == 3 * 4  # three steps, four vocabulary blocks
    torch.testing.assert_close(on_kernels.lm_head.weight, on_torch.lm_head.weight, rtol=1e-5, atol=1e-7)
    unpatch(on_kernels)
    assert "_forge_loss_backend" not in on_kernels.__dict__


@pytest.mark.parametrize("name, kwargs, error, match", [
    ("gpt2-tiny", {}, ValueError, "fused_loss=True supports"),
    ("llama-tiny", {"weight_store": "bf16_sr"}, ValueError, "random bits"),
    ("llama-tiny", {"loss_backend": "cuda"}, ValueError, "loss_backend must be"),
    ("llama-tiny", {"fused_loss": False, "loss_backend": "triton"}, ValueError, "pass fused_loss=True"),
])
def test_fused_loss_refusals_leave_the_model_untouched(name, kwargs, error, match):
    model = build_model(name)
    if kwargs.get("weight_store") == "bf16_sr":
        model = model.bfloat16()
    classes = {n: type(m) for n, m in model.named_modules()}
    with pytest.raises(error, match=match):
        patch(model, clip="none", **{"fused_loss": True, **kwargs})
    assert {n: type(m) for n, m in model.named_modules()} == classes
    assert "forward" not in model.__dict__ and "_forge_patch" not in model.__dict__


def test_backward_rows_checks_the_blocks_before_any_write():
    engine = ForgeEngine("adamw", "fp32")
    weight = nn.Parameter(torch.randn(10, 4))
    handle = engine.manage("w", weight.data, weight, engine.add_param_group({"lr": 0.1}))
    before = weight.detach().clone()
    x = torch.randn(3, 4)
    for blocks in ([(0, 5), (6, 10)], [(0, 5)], [(0, 5), (5, 5), (5, 10)], [(5, 10), (0, 5)], []):
        with pytest.raises(ValueError, match="consecutive"):
            engine.backward_rows(handle, x, blocks, lambda a, b: torch.randn(3, b - a))
    assert torch.equal(weight, before) and handle.micro_batches == 0
    engine.backward_rows(handle, x, [(0, 3), (3, 10)], lambda a, b: torch.ones(3, b - a))
    assert not torch.equal(weight, before) and handle.state.step == 1


def test_training_loss_of_a_fused_model_is_the_hf_loss():
    model = build_model("llama-tiny")
    (batch,) = batches(model, 1)
    with torch.no_grad():
        want = training_loss(model, batch)
    patch(model, clip="none", fused_loss=True)
    got = training_loss(model, batch)
    assert got.requires_grad and torch.allclose(got, want, rtol=1e-6)


def _block_case(dtype, tokens=7, cols=2500, seed=0):
    gen = torch.Generator().manual_seed(seed)
    logits = (4 * torch.randn(tokens, cols, generator=gen)).to(dtype)
    target_row = torch.randint(0, cols, (tokens,), generator=gen)
    target_block = torch.tensor([2, 2, -1, 0, 2, 5, 2])[:tokens]  # this block is 2; -1: ignored
    return logits, target_row, target_block


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_block_kernels_match_their_torch_twins(dtype):
    """The per-block Triton kernels (interpreted here) against the torch twins: more columns
    than one 1024-wide chunk, a partial last chunk, targets in and out of the block."""
    from forge_mcore.kernels.cross_entropy import block_dlogits_, block_stats

    logits, target_row, target_block = _block_case(dtype)
    tokens = logits.shape[0]
    got = [torch.zeros(3, tokens), torch.zeros(3, tokens), torch.zeros(tokens)]
    want = [torch.zeros(3, tokens), torch.zeros(3, tokens), torch.zeros(tokens)]
    block_stats(logits, target_row, target_block, 2, got[0][2], got[1][2], got[2])
    loss_mod._block_stats_torch(logits.clone(), torch.float32, target_row, target_block, 2, *want)
    for g, w, what in zip(got, want, ("max", "sum of exp", "target logit")):
        torch.testing.assert_close(g, w, rtol=2e-6, atol=0, msg=what)
    assert (got[2] != 0).sum() == 4  # the four tokens whose target is in block 2

    lse = want[0][2] + want[1][2].log() + 0.25  # any per-token value
    coef = torch.tensor([0.5, -1.0, 0.0, 2.0, 1.0, 0.125, 3.0])
    expected = loss_mod._block_dlogits_torch(logits.clone(), lse, coef, target_row, target_block, 2).float()
    result = block_dlogits_(logits.clone(), lse, coef, target_row, target_block, 2).float()
    tol = dict(rtol=1e-5, atol=1e-7) if dtype == torch.float32 else dict(rtol=8e-3, atol=1e-7)  # one bf16 ulp
    torch.testing.assert_close(result, expected, **tol)


def test_triton_and_torch_backends_give_the_same_loss_and_gradients():
    torch.manual_seed(1)
    head = nn.Linear(24, 1500, bias=False)
    hidden = torch.randn(2, 3, 24, requires_grad=True)
    labels = torch.randint(0, 1500, (2, 3))
    labels[1, 2] = -100
    results = {}
    for backend in ("torch", "triton"):
        loss = linear_cross_entropy(hidden, head, labels, block_rows=512, backend=backend)
        results[backend] = (loss, *torch.autograd.grad(loss, [hidden, head.weight]))
    for a, b, what in zip(results["triton"], results["torch"], ("loss", "hidden", "weight")):
        torch.testing.assert_close(a, b, rtol=2e-5, atol=1e-7, msg=what)
