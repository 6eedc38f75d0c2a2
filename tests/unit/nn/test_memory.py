"""Memory contract of the nn placement, counted on CPU with ``LiveBytes``.

On one H200 (Qwen3-8B, bs1 s512) the FORGE step holds, beyond weights and
optimizer state, exactly the activations and loss buffers any arm holds: its
peak is HF's cross-entropy backward. These tests pin down the three properties
behind that, so a regression (a ``.contiguous()``/cast copy of dY or X, an
extra saved tensor, a buffer kept across steps) fails here before it costs
148 MiB of dY at the LM head on the GPU. The torch backend's fp32 gradient
(which the kernel never materializes) is excluded by ``LiveBytes.paused``.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from forge_mcore import ops
from forge_mcore.models import build_model, example_batch, training_loss
from forge_mcore.nn import patch
from tests.unit.nn.memory import LiveBytes
from tests.unit.nn.reference import HP

OUT, IN, TOKENS = 37, 29, (3, 5)


def _quiet_reference_step(monkeypatch, mem: LiveBytes, seen: list | None = None) -> None:
    """Run the torch reference step untracked; record the (dY, X) operands it received."""
    reference = ops._torch_step

    def step(dy, x, *args, **kwargs):
        if seen is not None:
            seen.append((dy, x))
        with mem.paused():
            return reference(dy, x, *args, **kwargs)

    monkeypatch.setattr(ops, "_torch_step", step)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_fused_backward_copies_neither_grad_output_nor_input(monkeypatch, dtype, bias, input_requires_grad):
    layer = nn.Linear(IN, OUT, bias=bias).to(dtype)
    x = torch.randn(*TOKENS, IN, dtype=dtype, requires_grad=input_requires_grad)
    opt = patch(layer, state_dtype="bf16", clip="none", probe_inputs=(x,), **HP)
    y = layer(x)
    dy = torch.randn_like(y)
    mem, seen = LiveBytes(), []
    _quiet_reference_step(monkeypatch, mem, seen)
    with mem:
        y.backward(dy)
    weight_calls = [(g, i) for g, i in seen if i.shape[-1] == IN]
    assert len(weight_calls) == 1 and len(seen) == 1 + bias
    g, i = weight_calls[0]
    # the step reads the autograd buffers themselves (flattened views), not copies
    assert _same_storage(g, dy) and _same_storage(i, x), "dY or X was copied before the fused step"
    for g, _ in seen:
        assert _same_storage(g, dy)
    # dX is the only real allocation; the rest are a few scalars (telemetry, the bias's ones) and,
    # in the first backward, the engine's table of per-step scalars (a few floats per weight)
    table = opt.engine._hyper.untyped_storage().data_ptr()
    big = [a for a in mem.created if a.nbytes >= 64 and a.ptr != table]
    expected = [x.grad.untyped_storage().data_ptr()] if input_requires_grad else []
    assert [a.ptr for a in big] == expected, big
    assert layer.weight.grad is None and opt.engine.managed[0].stepped_iteration == 0


@pytest.mark.parametrize("name", ["qwen3-tiny", "llama-tiny", "gpt2-tiny"])
def test_patched_forward_holds_exactly_what_the_plain_forward_holds(name):
    plain, fused = build_model(name), build_model(name)
    patch(fused, state_dtype="bf16", clip="none", **HP)
    batch = example_batch(plain, 2, 9, generator=torch.Generator().manual_seed(0))
    held = {}
    for label, model in (("plain", plain), ("fused", fused)):
        with LiveBytes() as mem:
            loss = training_loss(model, batch)  # kept alive: its graph holds the saved activations
        held[label] = (mem.live, sorted((a.shape, a.dtype) for a in mem.survivors()))
        del loss
    assert held["fused"] == held["plain"], "the fused forward saves tensors nn.Linear would not"


def test_nothing_allocated_during_a_step_outlives_it(monkeypatch):
    model = build_model("qwen3-tiny", dtype=torch.bfloat16)
    opt = patch(model, state_dtype="bf16", clip="none", **HP)
    batch = example_batch(model, 2, 9, generator=torch.Generator().manual_seed(0))
    mem = LiveBytes()
    _quiet_reference_step(monkeypatch, mem)

    def step():
        loss = training_loss(model, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # the fallback optimizer allocates its state on its first step
    with mem:
        step()
    # Only the replaced per-step telemetry survives (the last step's sums of squares, for
    # grad_norm() and, per fallback tensor, grad_norms()).
    kept = {opt.engine.last_sumsq, opt.engine.last_nonfinite, opt._last_fallback_sumsq, opt._last_fallback[1]}
    survivors = mem.survivors()
    assert sorted(a.nbytes for a in survivors) == sorted(t.untyped_storage().nbytes() for t in kept), survivors
    assert all(p.grad is None for p in model.parameters())
    # and the fallback's gradients (the embedding's: 1.16 GiB at Qwen3-8B) were created and freed
    embed = model.get_input_embeddings().weight
    assert any(a.shape == tuple(embed.shape) for a in mem.created)
