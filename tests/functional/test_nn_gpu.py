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
