"""patch() on the GPU: the backward never synchronizes the host with the device.

A synchronization inside the backward (e.g. a blocking host-to-device copy of a
layer's per-step scalars) stalls the host once per fused layer, so the GPU idles
while Python prepares the next launch. Run on the device machine:
``python -m pytest -m gpu tests/functional -q``.
"""

from __future__ import annotations

import pytest
import torch

import forge_mcore
from forge_mcore.models import build_model, example_batch, training_loss

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name, fused_loss", [("qwen3-tiny", False), ("llama-tiny", True)])
def test_backward_never_synchronizes(name, fused_loss):
    model = build_model(name, dtype=torch.bfloat16, device="cuda", seed=0)
    opt = forge_mcore.patch(model, lr=1e-3, clip="none", fused_loss=fused_loss)
    batch = example_batch(model, 2, 16, generator=torch.Generator().manual_seed(0))
    for _ in range(2):  # the first step tunes (timing synchronizes) and allocates fallback state
        training_loss(model, batch).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    loss = training_loss(model, batch)
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    opt.step()
    assert opt.engine.managed, "nothing was fused"


@pytest.mark.parametrize("name", ["qwen3-tiny", "gpt2-tiny"])
def test_trains_like_torch_adamw_on_gpu(name):
    """patch() on CUDA (the Triton kernel, its replayed launches from the third step on,
    GPT-2's transposed weights) against torch.optim.AdamW, fp32 weights and states."""
    from tests.unit.nn.reference import HP, assert_weights_close, batches, noise_only_coordinates, train

    ref, model = (build_model(name, device="cuda") for _ in range(2))
    data = batches(ref, 12)
    skip = noise_only_coordinates(ref, data)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = forge_mcore.patch(model, state_dtype="fp32", clip="none", **HP)
    replays = forge_mcore.ops.launch_counts["replay"]
    ref_losses = train(ref, ref_opt, data)
    losses = train(model, opt, data)
    assert losses == pytest.approx(ref_losses, rel=1e-4)
    assert_weights_close(ref, model, rtol=1e-4, what=name, skip=skip)
    unbound = [h.name for h in opt.engine.managed if forge_mcore.ops._Replay not in h.state.launch_cache]
    assert not unbound, f"never replayed: {unbound}"
    assert forge_mcore.ops.launch_counts["replay"] - replays >= (len(data) - 2) * len(opt.engine.managed)


def test_no_activation_or_gradient_outlives_its_step():
    """After a few steps only parameters and optimizer state stay allocated: nothing on the
    launch path (the replay's bound launches included) holds a layer's dY or X."""
    import gc

    # cuBLAS keeps a 32 MiB workspace (from the caching allocator) per handle, and a handle per
    # thread: the first GEMM of autograd's backward thread makes one. Made here, it counts as
    # what was there before.
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.ones(8, 8, device="cuda", dtype=dtype, requires_grad=True)
        (a @ a).sum().backward()
    del a
    gc.collect()
    before = torch.cuda.memory_allocated()  # what earlier tests in this worker left
    model = build_model("qwen3-tiny", device="cuda")
    opt = forge_mcore.patch(model, state_dtype="fp32", clip="none")
    batch = example_batch(model, 16, 128, generator=torch.Generator().manual_seed(0))  # dY/X ~0.5 MB each
    for _ in range(4):
        training_loss(model, batch).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    del batch
    gc.collect()
    torch.cuda.synchronize()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    fallback = sum(t.numel() * t.element_size() for s in opt.fallback.state.values() for t in s.values()
                   if torch.is_tensor(t) and t.is_cuda)
    expected = params + opt.engine.state_nbytes() + fallback
    held = torch.cuda.memory_allocated() - before
    assert held <= expected + 2**21, (held, expected)


def test_fused_loss_on_gpu_trains_like_torch_adamw(monkeypatch):
    """patch(fused_loss=True) on CUDA: the LM head stepped by the Triton kernel in row blocks
    of 32 (its launches replayed per block) against torch.optim.AdamW with HF's loss."""
    import forge_mcore.nn.loss as loss_mod
    from tests.unit.nn.reference import HP, assert_weights_close, batches, train

    monkeypatch.setattr(loss_mod, "ROW_MULTIPLE", 8)
    monkeypatch.setattr(loss_mod, "BLOCK_ELEMENTS", 18 * 32)
    ref, model = (build_model("llama-tiny", device="cuda") for _ in range(2))
    data = batches(ref, 10)
    ref_opt = torch.optim.AdamW(ref.parameters(), **HP)
    opt = forge_mcore.patch(model, state_dtype="fp32", clip="none", fused_loss=True, **HP)
    replays = forge_mcore.ops.launch_counts["replay"]
    assert train(model, opt, data) == pytest.approx(train(ref, ref_opt, data), rel=1e-4)
    assert_weights_close(ref, model, rtol=1e-4, what="llama-tiny, fused loss")
    (head,) = [h for h in opt.engine.managed if h.name == "lm_head.weight"]
    assert len(head.row_views) == 4
    assert all(forge_mcore.ops._Replay in state.launch_cache for _, state in head.row_views.values())
    assert forge_mcore.ops.launch_counts["replay"] - replays >= (len(data) - 2) * (len(opt.engine.managed) + 3)


def test_fused_loss_lowers_the_peak_by_the_logits_buffers():
    """A 32k vocabulary at 1024 tokens, bf16: HF's loss holds fp32 logits-sized buffers
    (128 MiB each) at the peak; the fused loss holds none of them."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32768, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False, use_cache=False)
    peaks = {}
    for fused_loss in (False, True):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).to("cuda", torch.bfloat16)
        opt = forge_mcore.patch(model, lr=1e-4, clip="none", fused_loss=fused_loss)
        batch = example_batch(model, 2, 512, generator=torch.Generator().manual_seed(0))
        losses = []
        for step in range(3):
            if step == 2:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
            loss = training_loss(model, batch)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.item())
        peaks[fused_loss] = (torch.cuda.max_memory_allocated() - base) / 2**20
        assert all(torch.isfinite(torch.tensor(losses))), losses
        del model, opt, loss
        torch.cuda.empty_cache()
    logits_fp32 = 2 * 512 * 32768 * 4 / 2**20  # 128 MiB
    assert peaks[True] < peaks[False] - 2 * logits_fp32, peaks


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_loss_kernels_match_torch_ops_on_gpu(dtype):
    """linear_cross_entropy(backend="triton") (kernels/cross_entropy.py) against its torch ops
    on CUDA: loss, dX and the head's gradient (an unfused head), Qwen3's vocabulary, 3 blocks."""
    from forge_mcore.nn import linear_cross_entropy

    torch.manual_seed(0)
    head = torch.nn.Linear(256, 151936, bias=False, device="cuda", dtype=dtype)
    hidden = torch.randn(2, 300, 256, device="cuda", dtype=dtype, requires_grad=True)
    labels = torch.randint(0, 151936, (2, 300), device="cuda")
    labels[0, :7] = -100
    results = {}
    for backend in ("torch", "triton"):
        loss = linear_cross_entropy(hidden, head, labels, block_rows=65536, backend=backend)
        results[backend] = (loss, *torch.autograd.grad(loss, [hidden, head.weight]))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-2, atol=1e-5)
    for a, b, what in zip(results["triton"], results["torch"], ("loss", "dX", "dW")):
        torch.testing.assert_close(a.float(), b.float(), **tol, msg=what)


def test_kernel_leaves_each_weight_at_its_masters_rounding_and_input_only_backward_steps_nothing():
    """What patch() relies on for fp32 masters (a weight written outside the step is told apart
    from the kernel's own writes by comparing it with bf16(master)) and for a backward that asks
    only for dX: the Triton path, in bf16 with fp32 masters and the clip='previous' scale."""
    model = build_model("qwen3-tiny", dtype=torch.bfloat16, device="cuda", seed=0)
    opt = forge_mcore.patch(model, lr=1e-2, weight_store="fp32_master", clip="previous")
    batch = example_batch(model, 2, 16, generator=torch.Generator().manual_seed(0))
    for _ in range(3):
        training_loss(model, batch).backward()
        opt.clip_grad_norm_(0.1)
        opt.step()
        opt.zero_grad()
    for h in opt.engine.managed:
        assert torch.equal(h.state.master.to(torch.bfloat16), h.weight), h.name
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    embeds = model.get_input_embeddings()(batch["input_ids"]).detach().requires_grad_()
    loss = model(inputs_embeds=embeds, labels=batch["labels"]).loss
    (grad,) = torch.autograd.grad(loss, embeds)
    assert torch.isfinite(grad).all() and grad.abs().sum() > 0
    for name, p in model.named_parameters():
        assert torch.equal(p, before[name]), f"{name} was stepped by torch.autograd.grad(loss, inputs_embeds)"
