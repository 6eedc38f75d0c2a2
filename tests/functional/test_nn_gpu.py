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


def test_backward_never_synchronizes():
    model = build_model("qwen3-tiny", dtype=torch.bfloat16, device="cuda", seed=0)
    opt = forge_mcore.patch(model, lr=1e-3, clip="none")
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
