"""The GPU A/B script's code path, at toy shapes on two CPU ranks (``--smoke``)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from forge_mcore.bench import mcore_ab
from forge_mcore.bench.mcore_ab import _use_fused_adamw, adamw_kinds, load_previous, parse_args

from .common import init_parallel
from .ranks import on_ranks

TIMEOUT = 240


def _run(args, out, nproc=2):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
           "-m", "forge_mcore.bench.mcore_ab", "--smoke", "--out", str(out), *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        log, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # torchrun and the ranks it started
        log, _ = proc.communicate()
        pytest.fail(f"mcore_ab --smoke did not finish in {TIMEOUT} s:\n{log[-4000:]}")
    assert proc.returncode == 0, log[-4000:]
    return log


def test_mcore_ab_smoke_runs_every_two_rank_cell_and_resumes(tmp_path):
    out = tmp_path / "mcore_ab"
    _run(["--cells", "tp2,tp2-sp"], out)
    # the device script's relaunch: the cells attempted before are kept and skipped
    log = _run(["--resume"], out)
    assert "skipping ['tp2', 'tp2-sp']" in log, log[-4000:]
    rows = list(csv.DictReader(open(out / "summary.csv")))
    assert {r["cell"] for r in rows} == {"tp2", "tp2-sp", "ep2", "memory"}
    assert sum(r["cell"] == "tp2" and r["metric"] == "max |dloss|" for r in rows) == 2  # once per recipe
    gated = [r for r in rows if r["metric"] == "max |dloss|" and r["gate"] not in ("", "None")]
    assert gated and all(r["passed"] == "True" for r in gated), rows
    assert not [r for r in gated if "stock vs" in r["layout"]], gated  # the gate is on FORGE
    drift = [r for r in rows if r["metric"] == "mean |loss - fp32 reference| stock/FORGE"]
    assert len(drift) == 4 and all(len(r["value"].split("/")) == 2 for r in drift), drift  # 2 cells x 2 recipes
    ddp = [r for r in rows if r["metric"] == "fused weights in megatron DDP/opt"]
    # tp2, tp2-sp x 2 recipes; ep2 x 3 recipes
    assert len(ddp) == 7 and all(r["passed"] == "True" and r["value"].startswith("0/") for r in ddp), ddp
    results = json.loads((out / "results.json").read_text())
    assert results["attempted"] == ["tp2", "tp2-sp", "ep2", "memory"]
    # the memory cell times both arms alternating, one step each per round (2 rounds under --smoke)
    peaks = [r for r in results["rows"] if r["cell"] == "memory" and r["metric"] == "peak GB stock/FORGE"]
    assert len(peaks) == 2 and all(len(r[arm]["step_ms_all"]) == 2 for r in peaks for arm in ("stock", "forge"))


def test_ep2_against_the_one_rank_references(tmp_path):
    """The ep-local cell (one rank, EP=1, each rank's batch a micro-batch) and the ep2 cell
    compared with it. FORGE must agree to rounding in every recipe: the same tokens reach the
    same experts, whose update sums them in fp32 in both layouts, and each dense gradient is
    rounded per rank's batch in both. Stock experts round per micro-batch at EP=1 only."""
    local, out = tmp_path / "local", tmp_path / "ep2"
    _run(["--cells", "ep-local"], local, nproc=1)
    _run(["--cells", "ep2", "--ep-local", str(local)], out)
    rows = list(csv.DictReader(open(out / "summary.csv")))
    one_rank = {(r["recipe"], r["layout"]): r for r in rows if "one-rank" in r["layout"]}
    assert len(one_rank) == 6, rows  # FORGE and stock, 3 recipes
    gated = [r for (_, layout), r in one_rank.items() if layout == "EP=2 forge vs one-rank forge reference"]
    assert len(gated) == 3 and all(r["gate"] == "0.0001" for r in gated)
    ungated = [r for r in rows if r["metric"] == "max |dloss|" and r not in gated]
    assert len(ungated) == 9 and all(r["gate"] == "" for r in ungated), ungated  # stock rows, the EP=1 reference
    assert all(float(r["value"]) < 1e-6 for r in gated), gated
    assert float(one_rank[("fp32", "EP=2 stock vs one-rank stock reference")]["value"]) < 1e-5


def test_load_previous_marks_an_attempted_cell_without_rows_unfinished(tmp_path):
    rows = [dict(cell="tp2", metric="max |dloss|", value=1e-5)]
    (tmp_path / "results.json").write_text(json.dumps({"meta": {"argv": ["x"]}, "attempted": ["tp2", "ep2"],
                                                       "rows": rows}))
    previous, attempted, launches = load_previous(str(tmp_path))
    assert attempted == ["tp2", "ep2"] and launches == [["x"]]
    assert [(r["cell"], r["metric"]) for r in previous] == [("tp2", "max |dloss|"), ("ep2", "error")]
    assert previous[1]["passed"] is False and previous[1]["value"].startswith("unfinished")
    assert load_previous(str(tmp_path / "absent")) == ([], [], [])


def test_stock_adamw_is_made_fused_on_its_param_groups():
    """torch takes ``fused`` from each param group at step time: megatron's groups carry
    ``fused=None`` from the unfused AdamW, so the flag has to be set on them."""
    p = torch.nn.Parameter(torch.randn(4, 8))
    holder = SimpleNamespace(optimizer=torch.optim.AdamW([{"params": [p], "wd_mult": 1.0}], lr=1e-3))
    chained = SimpleNamespace(chained_optimizers=[holder])
    assert adamw_kinds(chained) == ["default"]
    _use_fused_adamw(chained)  # CPU parameters: left as they are
    assert adamw_kinds(chained) == ["default"]
    _use_fused_adamw(chained, require_cuda=False)
    assert adamw_kinds(chained) == ["fused"] and holder.optimizer.param_groups[0]["wd_mult"] == 1.0
    before = p.detach().clone()
    p.grad = torch.ones_like(p)
    holder.optimizer.step()  # torch's fused AdamW also runs on CPU tensors
    assert not torch.equal(before, p.detach())


@pytest.mark.parametrize("argv", [["--share-gpu"], ["--share-gpu", "--cells", "ep2,memory"],
                                  ["--share-gpu", "--cells", "ep2", "--smoke"]])
def test_share_gpu_runs_the_ep2_cell_alone(argv, capsys):
    """Two ranks on one GPU over gloo give the ep2 cell's bits, not a peak or a step time."""
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert "--share-gpu runs the ep2 cell alone" in capsys.readouterr().err
    assert parse_args(["--share-gpu", "--cells", "ep2"]).share_gpu


def _fake_ctx(monkeypatch, ms_per_step: dict[str, list[float]]):
    """(ctx, calls) for the memory cell's measurements: train_step records (arm, step) and advances a
    stood-in clock by the arm's next duration; the CUDA counters record when they are reset."""
    calls, now = [], [0.0]

    def train_step(arm, shape, step, device):
        done = sum(name == arm.name for name, _ in calls if name != "reset")
        now[0] += ms_per_step[arm.name][done] / 1e3
        calls.append((arm.name, step))

    monkeypatch.setattr(mcore_ab, "train_step", train_step)
    monkeypatch.setattr(mcore_ab, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    ctx = SimpleNamespace(args=SimpleNamespace(warmup=2, timed_steps=3), device="cpu")
    return ctx, calls


def test_peak_counts_the_timed_steps_above_the_baseline_in_gib(monkeypatch):
    ctx, calls = _fake_ctx(monkeypatch, {"stock": [1.0] * 5})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: calls.append(("reset", None)))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 5 * 2**30)
    peak = mcore_ab._peak(SimpleNamespace(name="stock"), None, ctx, baseline=2**30)
    assert calls == [("stock", 0), ("stock", 1), ("reset", None), ("stock", 2), ("stock", 3), ("stock", 4)]
    assert peak == dict(peak_bytes=5 * 2**30, baseline_bytes=2**30, peak_gb=4.0)


def test_interleaved_timing_alternates_the_arms_and_takes_the_median(monkeypatch):
    ctx, calls = _fake_ctx(monkeypatch, {"stock": [10.0, 12.0, 50.0], "forge": [11.0, 40.0, 9.0]})
    arms = [SimpleNamespace(name="stock"), SimpleNamespace(name="forge")]
    timing = mcore_ab._time_interleaved(arms, None, ctx)
    first = 2 + 3  # after the peak measurement's warm-up and timed steps
    assert calls == [("stock", first), ("forge", first), ("forge", first + 1), ("stock", first + 1),
                     ("stock", first + 2), ("forge", first + 2)]
    assert timing["stock"]["step_ms_all"] == pytest.approx([10.0, 12.0, 50.0])
    assert (timing["stock"]["step_ms"], timing["forge"]["step_ms"]) == pytest.approx((12.0, 11.0))


def test_max_gap_is_the_largest_absolute_difference():
    assert mcore_ab.max_gap([1.0, 2.0, 3.0], [1.5, 1.0, 3.0]) == 1.0
    assert mcore_ab.max_gap([1.0, 2.0], [1.25, 2.0]) == 0.25  # FORGE's loss above stock's counts too


@on_ranks(1)
def mcore_ab_recipes_reach_both_optimizers(rank, world_size):
    """(megatron's bf16 flag, FORGE's state dtype) of each recipe's stock and FORGE arms."""
    init_parallel()
    shape, seen = mcore_ab.SMOKE_SHAPE, {}
    for name in ("fp32-master", "bf16-state"):
        recipe = mcore_ab.RECIPE[name]
        config = mcore_ab.transformer_config(shape, recipe, cpu=True)
        for forge in (False, True):
            arm = mcore_ab.build_arm("forge" if forge else "stock", config, shape, recipe, forge, lr=1e-3, steps=2)
            members = arm.optimizer.chained_optimizers
            seen[name, forge] = ({m.config.bf16 for m in members}, members[-1].engine.state_dtype if forge else None)
            mcore_ab.free(arm)
    return seen


def test_the_fp32_master_recipe_keeps_fp32_masters_and_states(rank_results):
    assert rank_results(mcore_ab_recipes_reach_both_optimizers) == {
        ("fp32-master", False): ({True}, None), ("fp32-master", True): ({True}, "fp32"),
        ("bf16-state", False): ({False}, None), ("bf16-state", True): ({False}, "bf16")}
