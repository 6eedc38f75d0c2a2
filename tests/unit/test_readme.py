"""The README's core-API example runs as written (torch backend, CPU) and steps its weight."""

from __future__ import annotations

import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[2] / "README.md"


def test_core_api_example_runs_and_steps_the_weight():
    section = README.read_text().split("## The core API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope: dict = {}
    torch.manual_seed(0)  # the example's weight is its first random draw
    exec(compile(code, f"{README} (core API)", "exec"), scope)
    weight, dy, x, tel = scope["weight"], scope["dy"], scope["x"], scope["tel"]
    torch.manual_seed(0)
    ref = torch.nn.Parameter(torch.randn(weight.shape))
    ref.grad = dy.t() @ x
    torch.optim.AdamW([ref], lr=1e-3).step()
    assert scope["state"].step == 1 and tel.nonfinite_tiles.item() == 0
    torch.testing.assert_close(tel.sumsq, ref.grad.square().sum().reshape(1), rtol=1e-5, atol=0)
    torch.testing.assert_close(weight, ref.detach(), rtol=0, atol=2e-5)  # int8 moments: their rounding
