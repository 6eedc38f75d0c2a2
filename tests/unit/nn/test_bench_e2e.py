"""The end-to-end benchmark runs its whole pipeline on CPU (--smoke): processes, CSV, table."""

from __future__ import annotations

import csv
import math

import pytest

from forge_mcore.bench import e2e


def test_smoke_run_writes_csv_and_prints_the_table_last(tmp_path, capsys):
    code = e2e.main(["--smoke", "--arms", "forge-bf16,galore", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    with open(tmp_path / "e2e_peer.csv") as f:
        rows = {r["arm"]: r for r in csv.DictReader(f)}
    assert list(rows) == ["fused", "forge-bf16", "galore"]  # the fused AdamW baseline is always run
    for arm in ("fused", "forge-bf16"):
        assert rows[arm]["status"] == "ok", rows[arm]["status"]
        assert math.isfinite(float(rows[arm]["step_ms"])) and float(rows[arm]["step_ms"]) > 0
    assert float(rows["fused"]["time_vs_fused"]) == 1.0
    assert float(rows["forge-bf16"]["coverage"]) > 0.8
    galore = rows["galore"]["status"]
    assert galore == "ok" or galore.startswith("not installed"), galore
    assert out.rstrip().splitlines()[-1].startswith("qwen3-tiny")  # the summary table comes last


def test_protocol_limits_are_enforced(capsys):
    import pytest

    with pytest.raises(SystemExit):
        e2e.parse_args(["--steps", "5"])
    assert "--steps >= 10" in capsys.readouterr().err


def test_host_overhead_interleaved_mode_times_every_arm_each_round():
    import json
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "device", "host_overhead.py")
    env = {**os.environ, "INTERLEAVE": "1", "MODEL": "qwen3-tiny", "DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, script, "fused", "forge-bf16"], env=env, capture_output=True, text=True,
                         timeout=240, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["arm"] for r in rows] == ["fused", "forge-bf16"]
    assert all(r["interleaved"] and len(r["step_ms_all"]) == 20 and r["step_ms"] > 0 for r in rows)


def _fake_cuda_cell(monkeypatch, durations_s: list[float], peak_bytes: int):
    """run_cell on a CUDA cell, its model on the CPU: the CUDA counters and the clock stood in for.
    Each training step advances the clock by the next of ``durations_s``; returns (result, events)."""
    import types

    import torch

    import forge_mcore.models as models

    events, now = [], [0.0]
    build, loss = models.build_model, models.training_loss

    def training_loss(model, batch):
        now[0] += durations_s[len([e for e in events if e == "step"])]
        events.append("step")
        return loss(model, batch)

    monkeypatch.setattr(models, "build_model", lambda name, **kw: build(name, **{**kw, "device": "cpu"}))
    monkeypatch.setattr(models, "training_loss", training_loss)
    monkeypatch.setattr(e2e, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: events.append("reset"))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: peak_bytes)
    cell = e2e.Cell("fused", "qwen3-tiny", 8, warmup=2, steps=3, device="cuda")
    return e2e.run_cell(cell), events


def test_run_cell_peak_in_gib_and_median_of_the_timed_steps_only(monkeypatch):
    # two slow warm-up steps, then 10, 30, 20 ms
    result, events = _fake_cuda_cell(monkeypatch, [1.0, 1.0, 0.010, 0.030, 0.020], peak_bytes=3 * 2**30)
    assert events == ["step", "step", "reset", "step", "step", "step"]  # the peak counts the timed steps only
    assert result["peak_gb"] == 3.0  # GB = 2**30 bytes
    assert result["step_ms"] == pytest.approx(20.0)
    assert (result["step_ms_min"], result["step_ms_max"]) == pytest.approx((10.0, 30.0))
    assert math.isfinite(result["loss_first"]) and math.isfinite(result["loss_last"])


def test_flops_per_step_counts_every_matmul_forward_and_backward():
    import torch

    from forge_mcore.models import build_model

    model = build_model("qwen3-tiny", dtype=torch.float32, device="meta")
    c = model.config
    q, kv = c.num_attention_heads * c.head_dim, c.num_key_value_heads * c.head_dim
    per_layer = c.hidden_size * (2 * q + 2 * kv) + 3 * c.hidden_size * c.intermediate_size
    matmul = c.num_hidden_layers * per_layer + c.vocab_size * c.hidden_size  # + the LM head, tied or not
    tokens, seq = 2 * 16, 16
    attn = c.num_hidden_layers * tokens * seq * q
    assert e2e._flops_per_step(model, tokens, seq) == 6.0 * tokens * matmul + 6.0 * attn


def test_run_table_draws_ratios_against_the_fused_arm(monkeypatch):
    import argparse

    measured = {"fused": dict(step_ms=10.0, peak_gb=4.0), "forge-bf16": dict(step_ms=15.0, peak_gb=1.0)}
    monkeypatch.setattr(e2e, "_spawn", lambda cell, timeout: ("ok", measured[cell.arm]))
    args = argparse.Namespace(device="cpu", batch=1, warmup=1, steps=2, timeout=1.0)
    rows = e2e.run_table("peer", [("qwen3-tiny", 16)], ["fused", "forge-bf16"], args)
    ratios = {r.arm: (r.time_vs_fused, r.peak_vs_fused) for r in rows}
    assert ratios == {"fused": (1.0, 1.0), "forge-bf16": (1.5, 0.25)}
