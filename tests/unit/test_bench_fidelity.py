"""The App. E fidelity bench on the CPU at small shapes: its error measure and its fp32 reference."""

from __future__ import annotations

import math

import pytest
import torch

from forge_mcore.bench import fidelity


def test_rms_rel_is_the_norm_of_the_difference_over_the_reference_norm():
    ref = torch.tensor([[3.0, -4.0], [0.0, 12.0]])  # ||ref|| = 13
    w = ref + torch.tensor([[0.0, 0.0], [0.13, 0.0]])
    rms_rel, max_abs = fidelity._rms_rel(w, ref)
    assert rms_rel == pytest.approx(0.01, rel=1e-6)
    assert max_abs == pytest.approx(0.13, rel=1e-6)


def test_fp32_arms_track_the_fp32_reference_and_the_master_is_what_is_compared(monkeypatch):
    monkeypatch.setattr(fidelity, "V", 32)
    monkeypatch.setattr(fidelity, "H", 64)
    monkeypatch.setattr(fidelity, "BT", 48)
    rows = {r["arm"]: r["rms_rel"] for r in fidelity.run(device="cpu", steps=3)}
    assert len(rows) == 8 and all(math.isfinite(v) for v in rows.values()), rows
    # fp32 end to end (and FORGE's fp32 master) follow the fp32 reference to fp32 rounding; the stock
    # fp32-master arm steps on a gradient rounded to bf16, the bf16 arms keep bf16 weights
    assert rows["forge fp32 (fp32 weight)"] < 1e-6 and rows["forge fp32-master"] < 1e-6, rows
    assert rows["standard fp32-master"] > 100 * rows["forge fp32-master"], rows
    assert rows["standard bf16"] > 10 * rows["standard fp32-master"], rows
