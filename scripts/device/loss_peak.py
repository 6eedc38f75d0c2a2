"""Where a FORGE step's memory peak sits, with the LM head fused with its loss, by block size.

    CUDA_VISIBLE_DEVICES=0 python3 scripts/device/loss_peak.py [model] [seq]   # default qwen3-8b 512

One process, FORGE bf16 states, ``patch(fused_loss=True)``. For each vocabulary block
size (``forge_mcore.nn.loss.BLOCK_ELEMENTS``) it runs warm-up steps, then one step with
``max_memory_allocated`` read (and reset) at four points: after the forward, when the
gradient reaches the final hidden states (the loss backward done), after the backward,
after ``step()``; and the median time of a few steps. Prints one JSON line per size.
GB = 2^30 bytes, as the e2e benchmark.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import forge_mcore.nn.loss as loss_mod  # noqa: E402
from forge_mcore.models import build_model, example_batch  # noqa: E402
from forge_mcore.nn import patch  # noqa: E402

GB = 2**30


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen3-8b"
    seq = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    model = build_model(name, dtype=torch.bfloat16, device="cuda", seed=0)
    model.config.use_cache = False
    opt = patch(model, state_dtype="bf16", lr=1e-5, clip="none", fused_loss=True,
                fallback=lambda groups: torch.optim.AdamW(groups, fused=True))
    batch = example_batch(model, 1, seq, generator=torch.Generator().manual_seed(0))
    marks: dict[str, float] = {}

    def mark(label: str) -> None:
        marks[label] = torch.cuda.max_memory_allocated() / GB
        torch.cuda.reset_peak_memory_stats()

    def step(measure: bool) -> None:
        out = model(**batch)
        if measure:
            mark("forward")
            # the loss backward ends when the final hidden states get their gradient
            hidden = model.model.norm.weight
            handle = hidden.register_hook(lambda g: mark("loss backward + final norm"))
        out.loss.backward()
        if measure:
            handle.remove()
            mark("rest of backward")
        opt.step()
        opt.zero_grad(set_to_none=True)
        if measure:
            mark("step")

    for elements in (1 << 23, 1 << 22, 1 << 21):
        loss_mod.BLOCK_ELEMENTS = elements
        for _ in range(3):
            step(False)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(True)
        times = []
        for _ in range(6):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step(False)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        rows = len(loss_mod.vocab_blocks(model.lm_head.weight.shape[0], seq))
        print(json.dumps({"model": name, "seq": seq, "block_elements": elements, "blocks": rows,
                          "peak_gb": max(marks.values()), "peaks_gb": marks,
                          "step_ms": statistics.median(times)}), flush=True)


if __name__ == "__main__":
    main()
