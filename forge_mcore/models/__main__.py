"""Parameter count and fusable coverage of every real-size config, on the meta device.

    python -m forge_mcore.models

Coverage here = parameters of modules ``patch()`` can own (exact ``nn.Linear``,
HF ``Conv1D``, HF 3-D experts) that are not tied to another name, over all
parameters. ``patch()`` confirms single use with its probe forward; the CPU
tests run that probe on each family's tiny twin.
"""

from __future__ import annotations

from collections import Counter

import torch

from forge_mcore.models import build_model, model_names
from forge_mcore.nn.manager import _candidates


def coverage(name: str) -> tuple[float, float]:
    """(total parameters in millions, fusable fraction) of a real-size config."""
    model = build_model(name, device="meta", dtype=torch.bfloat16)
    ties = Counter(id(p) for _, p in model.named_parameters(remove_duplicate=False))
    total = sum(p.numel() for p in model.parameters())
    fusable = sum(p.numel() for m in _candidates(model).values() for p in m.parameters(recurse=False)
                  if ties[id(p)] == 1)
    return total / 1e6, fusable / total


if __name__ == "__main__":
    print(f"{'model':<16} {'params (M)':>11} {'coverage':>9}")
    for name in model_names():
        if name.endswith("-tiny"):
            continue
        total, cov = coverage(name)
        print(f"{name:<16} {total:>11.1f} {cov:>9.3f}")
