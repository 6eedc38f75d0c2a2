"""Committed tile-config winners (kernels/winners.csv): valid, and used instead of tuning."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.kernel import ARMS, runs_as_labelled
from forge_mcore.kernels import winners
from forge_mcore.kernels.configs import CONFIGS, GLUON_KERNELS, SMEM_BUDGET, prune_configs, smem_budget


def test_committed_winners_are_current_candidates():
    rows = winners.read()
    assert rows, "winners.csv is empty"
    arms = {(rule, codec): hp for rule, codec, hp, _ in ARMS.values()}
    for device, arch, cells, cfg, _ms in rows:
        assert arch.startswith("sm_"), (device, arch)  # what a device without rows of its own borrows by
        assert cfg in CONFIGS, (device, cells, cfg)
        # and runs the kernel it names (a Gluon config that does not apply runs the Triton one)
        rule, codec, store = cells[7], cells[9], cells[10]
        state = fm.ForgeParamState.create(torch.zeros(1, 1, dtype=torch.bfloat16), rule, arms[(rule, codec)], codec,
                                          store)
        assert runs_as_labelled(cfg, state, torch.zeros(1, 1, dtype=torch.bfloat16)), (device, cells, cfg)


def _setup(monkeypatch, tmp_path, device_name, arch="sm_90", smem_optin=227 * 1024):
    w = torch.zeros(1024, 4096, dtype=torch.bfloat16)
    state = fm.ForgeParamState.create(w, "adamw", {}, "bf16", "bf16")
    dy = torch.zeros(300, 1024, dtype=torch.bfloat16)  # BT 300 -> bucket 512
    key = ops._tune_key(dy, w, state, None)
    path = str(tmp_path / "winners.csv")
    winners.write([("Some GPU", "sm_90", winners.key_cells(key), CONFIGS[-1], 0.1)], path=path)
    monkeypatch.setattr(winners, "WINNERS_CSV", path)
    monkeypatch.setattr(ops, "interpreter_active", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: device_name)
    monkeypatch.setattr(winners, "arch_of", lambda device=None: arch)
    monkeypatch.setattr(ops, "_smem_budget", lambda device_index: smem_budget(smem_optin))
    monkeypatch.setattr(ops, "_tuned", {})
    return w, state, dy


def test_a_committed_winner_is_used_without_tuning(monkeypatch, tmp_path):
    w, state, dy = _setup(monkeypatch, tmp_path, "Some GPU")

    def must_not_time(*args):
        raise AssertionError("the tuner ran although a committed winner matched")

    cfg = ops._select_config(dy, w, state, None, must_not_time, None)
    assert cfg == CONFIGS[-1]


@pytest.mark.parametrize("device_name,arch,autotune", [("Other GPU", "sm_100", "0"), ("Some GPU", "sm_90", "1")])
def test_other_architectures_and_forge_autotune_tune(monkeypatch, tmp_path, device_name, arch, autotune):
    w, state, dy = _setup(monkeypatch, tmp_path, device_name, arch)
    monkeypatch.setenv("FORGE_AUTOTUNE", autotune)
    timed = []
    monkeypatch.setattr("triton.testing.do_bench", lambda fn, **kw: timed.append(1) or float(len(timed)))
    monkeypatch.setattr(ops._Operands, "scratch", lambda self, rows: self)
    cfg = ops._select_config(dy, w, state, None, lambda *a: None, ops._Operands(w, None, [], None, None, None))
    assert len(timed) > 1 and cfg == ops.prune_configs(CONFIGS, 1024, 4096, 300, 2)[0]


def test_the_tuner_never_compiles_a_config_over_the_devices_shared_memory(monkeypatch, tmp_path):
    """On a device whose blocks opt into less shared memory than Hopper's 227 KB (an A100: 163 KB)
    the configs whose slab ring does not fit with Hopper's headroom are pruned before any is timed;
    the budget comes from the device's properties, Hopper's where they do not say."""
    from types import SimpleNamespace

    device_budget = ops._smem_budget.__wrapped__  # (uncached; _setup stands in for it)
    w, state, dy = _setup(monkeypatch, tmp_path, "NVIDIA A100-SXM4-80GB", "sm_80", smem_optin=163 * 1024)
    timed = []
    monkeypatch.setattr("triton.testing.do_bench", lambda fn, **kw: fn() or float(len(timed)))
    monkeypatch.setattr(ops._Operands, "scratch", lambda self, rows: self)
    operands = ops._Operands(w, None, [], None, None, None)
    ops._select_config(dy, w, state, None, lambda c, *a: timed.append(c), operands)
    budget = smem_budget(163 * 1024)
    assert budget == 136 * 1024 and timed and all(c.smem_bytes(2) <= budget for c in timed)
    assert any(c.smem_bytes(2) > budget for c in ops.prune_configs(CONFIGS, 1024, 4096, 300, 2))
    assert smem_budget(None) == smem_budget(227 * 1024) == smem_budget(256 * 1024) == SMEM_BUDGET
    for props, expected in ((SimpleNamespace(shared_memory_per_block_optin=99 * 1024), 72 * 1024),
                            (SimpleNamespace(), SMEM_BUDGET)):
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index, props=props: props)
        assert device_budget(0) == expected


def test_forge_gluon_0_tunes_among_the_triton_configs_only(monkeypatch, tmp_path):
    w, state, dy = _setup(monkeypatch, tmp_path, "Some GPU")
    assert CONFIGS[-1].kernel in GLUON_KERNELS  # the committed winner _setup wrote is a Gluon config
    monkeypatch.setenv("FORGE_GLUON", "0")
    timed = []
    monkeypatch.setattr("triton.testing.do_bench", lambda fn, **kw: fn() or float(len(timed)))
    monkeypatch.setattr(ops._Operands, "scratch", lambda self, rows: self)
    operands = ops._Operands(w, None, [], None, None, None)
    cfg = ops._select_config(dy, w, state, None, lambda c, *a: timed.append(c), operands)
    assert len(timed) > 1 and all(c.kernel == "triton" for c in timed) and cfg.kernel == "triton"
    # with the Gluon kernel allowed again the committed winner holds; each choice is kept apart
    monkeypatch.setenv("FORGE_GLUON", "1")
    assert ops._select_config(dy, w, state, None, None, operands) == CONFIGS[-1]
    monkeypatch.setenv("FORGE_GLUON", "0")
    assert ops._select_config(dy, w, state, None, None, operands) == cfg


def test_the_tuner_times_each_config_a_launch_runs_once(monkeypatch, tmp_path):
    """Where the Gluon kernel does not apply (fp8 states, an fp32 master, ...) its configs run their
    Triton geometry, several the same one or a Triton config of the list: each is timed once."""
    w, state, dy = _setup(monkeypatch, tmp_path, "Other GPU", "sm_100")  # no winner for its architecture: it tunes
    timed = []
    monkeypatch.setattr("triton.testing.do_bench", lambda fn, **kw: fn() or float(len(timed)))
    monkeypatch.setattr(ops._Operands, "scratch", lambda self, rows: self)
    operands = ops._Operands(w, None, [], None, None, None)
    cfg = ops._select_config(dy, w, state, None, lambda c, *a: timed.append(c), operands,
                             lambda c: c.triton_geometry)
    pool = ops.prune_configs(CONFIGS, 1024, 4096, 300, 2)
    assert timed == list(dict.fromkeys(c.triton_geometry for c in pool))
    assert len(timed) < len(pool) and all(c.kernel == "triton" for c in timed) and cfg == timed[0]


def _key(M, N, bt, rule="adamw", codec="bf16"):
    w = torch.zeros(M, N, dtype=torch.bfloat16, device="meta")
    state = fm.ForgeParamState.create(torch.zeros(1, 1, dtype=torch.bfloat16), rule, {}, codec, "bf16")
    return ops._tune_key(torch.zeros(bt, 1, dtype=torch.bfloat16), w, state, None)


def test_an_unmeasured_shape_or_bt_takes_the_nearest_winner_of_its_kind(monkeypatch, tmp_path):
    """A key with no row of its own takes the config of the row fewest doublings away in out x in
    and BT, among rows of the same rule and codec whose config is a candidate here; a key of a
    kind with no row gets None (the caller tunes)."""
    gluon = [c for c in CONFIGS if c.kernel in GLUON_KERNELS]
    near, far, other_codec, not_candidate = gluon[0], gluon[1], gluon[2], gluon[3]
    path = str(tmp_path / "winners.csv")
    winners.write([("Some GPU", "sm_90", winners.key_cells(_key(4096, 4096, 1024)), near, 0.1),
                   ("Some GPU", "sm_90", winners.key_cells(_key(1024, 4096, 16384)), far, 0.1),
                   ("Some GPU", "sm_90", winners.key_cells(_key(4096, 4096, 2048, codec="int8")), other_codec, 0.1),
                   ("Some GPU", "sm_90", winners.key_cells(_key(4096, 4096, 2048)), not_candidate, 0.1)], path=path)
    monkeypatch.setattr(winners, "WINNERS_CSV", path)
    candidates = [near, far, other_codec]
    # BT 2000 (bucket 2048) on 4096 x 4096: its own row's config is no candidate here; 4096² at
    # BT 1024 is one doubling away, 1024 x 4096 at 16384 five
    assert winners.lookup(_key(4096, 4096, 2000), "Some GPU", candidates) == near
    assert winners.lookup(_key(4096, 4096, 2000), "Some GPU", candidates + [not_candidate]) == not_candidate
    assert winners.lookup(_key(2048, 4096, 8192), "Some GPU", candidates) == far  # 1 + 1 doublings vs 1 + 3
    assert winners.lookup(_key(4096, 4096, 2000, codec="int8"), "Some GPU", [near, far]) is None
    assert winners.lookup(_key(4096, 4096, 1024, rule="lion"), "Some GPU", candidates) is None
    assert winners.lookup(_key(4096, 4096, 1024), "Other GPU", candidates) is None
    assert winners.lookup(_key(4096, 4096, 1024), "Other GPU", candidates, "sm_100") is None


def test_a_device_borrows_the_winners_of_its_architecture_and_its_own_rows_win_ties(monkeypatch, tmp_path):
    """A device with no row of a key's kind takes the rows of devices of its architecture (an H100
    starts on an H200's winners instead of minutes of tuning); where it has rows of its own, the
    key's exact row wins wherever it was measured, and its own row wins a tie."""
    gluon = [c for c in CONFIGS if c.kernel in GLUON_KERNELS]
    mine, sibling_exact, sibling_tie, foreign = gluon[:4]
    path = str(tmp_path / "winners.csv")
    winners.write([("H200", "sm_90", winners.key_cells(_key(4096, 4096, 4096)), sibling_exact, 0.1),
                   ("H200", "sm_90", winners.key_cells(_key(4096, 4096, 512)), sibling_tie, 0.1),
                   ("B200", "sm_100", winners.key_cells(_key(4096, 4096, 1024)), foreign, 0.1),
                   ("H100", "sm_90", winners.key_cells(_key(4096, 4096, 2048)), mine, 0.1)], path=path)
    monkeypatch.setattr(winners, "WINNERS_CSV", path)
    candidates = gluon[:4]
    assert winners.lookup(_key(4096, 4096, 4096), "H100", candidates, "sm_90") == sibling_exact
    assert winners.lookup(_key(4096, 4096, 1024), "H100", candidates, "sm_90") == mine  # a doubling from both
    assert winners.lookup(_key(4096, 4096, 256), "H100", candidates, "sm_90") == sibling_tie
    # a device with no rows at all: the nearest of its architecture's, never another architecture's
    assert winners.lookup(_key(4096, 4096, 256), "H800", candidates, "sm_90") == sibling_tie
    assert winners.lookup(_key(4096, 4096, 2048), "H800", candidates, "sm_90") == mine
    assert winners.lookup(_key(4096, 4096, 1024), "H800", [foreign], "sm_90") is None
    assert winners.lookup(_key(4096, 4096, 1024), "H800", candidates) is None  # no architecture given


def test_winners_take_the_architecture_from_the_benchmarks_ceilings(monkeypatch, tmp_path):
    """``--winners`` records each CSV's device and architecture (``ceilings.json``); a CSV from before
    the architecture was written takes the one the file records for its device, and with none it
    fails before the file is written."""
    import csv
    import json
    from dataclasses import asdict

    from forge_mcore.bench.kernel import write_winners

    path = tmp_path / "winners.csv"
    winners.write([("H200", "sm_90", winners.key_cells(_key(1024, 4096, 512)), CONFIGS[0], 0.1)], path=str(path))
    monkeypatch.setattr(winners, "WINNERS_CSV", str(path))

    def bench_csv(name, ceilings):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "ceilings.json").write_text(json.dumps(ceilings))
        with open(folder / "kernel.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["shape", "bt", "arm", "forge_ms", "config"])
            w.writeheader()
            w.writerow(dict(shape="4096x4096", bt="512", arm="adamw-bf16", forge_ms="0.07",
                            config=str(asdict(CONFIGS[1]))))
        return str(folder / "kernel.csv")

    before = path.read_text()
    with pytest.raises(ValueError, match="arch"):
        write_winners([bench_csv("unknown", {"device": "H100"})])
    assert path.read_text() == before
    assert write_winners([bench_csv("h100", {"device": "H100", "arch": "sm_90"}),
                          bench_csv("old_h200", {"device": "H200"})]) == 3
    rows = {(device, cells[1:4]): (arch, cfg) for device, arch, cells, cfg, _ in winners.read(str(path))}
    assert rows[("H100", ("4096", "4096", "512"))] == ("sm_90", CONFIGS[1])
    assert rows[("H200", ("4096", "4096", "512"))] == ("sm_90", CONFIGS[1])
    assert rows[("H200", ("1024", "4096", "512"))] == ("sm_90", CONFIGS[0])


def test_a_first_step_on_an_unmeasured_bt_does_not_tune(monkeypatch, tmp_path):
    w, state, _ = _setup(monkeypatch, tmp_path, "Some GPU")  # a winner at 1024 x 4096, BT bucket 512

    def must_not_time(*args):
        raise AssertionError("the tuner ran although a winner of the same kind was committed")

    dy = torch.zeros(3000, 1024, dtype=torch.bfloat16)  # bucket 4096: no row of its own
    assert ops._select_config(dy, w, state, None, must_not_time, None) == CONFIGS[-1]


def test_report_and_winners_take_the_swept_best_of_current_configs(tmp_path):
    """A sweep beside the grid CSV: a faster current config replaces the grid's time in the
    report (speedup and % of floor follow it); a removed config never counts, however fast."""
    import csv
    from dataclasses import asdict

    from forge_mcore.bench.kernel import best_per_cell, write_report
    from forge_mcore.kernels.configs import TileConfig

    grid_cfg, coop = CONFIGS[0], next(c for c in CONFIGS if c.kernel == "gluon_coop")
    removed = TileConfig(32, 64, 32, 4, 4, 2)  # in no list
    grid = dict(shape="4096x4096", bt="4096", arm="adamw-bf16", forge_ms="0.30", baseline_ms="0.27",
                cublas_ms="0.2", mainloop_ms="0.22", floor_ms="0.18", bytes_moved="1", pct_floor="60.0",
                speedup="0.90", mainloop_eff="90.0", baseline_kind="adamw", config=str(asdict(grid_cfg)))
    with open(tmp_path / "kernel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(grid))
        w.writeheader()
        w.writerow(grid)
    with open(tmp_path / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["shape", "bt", "arm", "config", "forge_ms"])
        w.writeheader()
        w.writerow(dict(shape="4096x4096", bt="4096", arm="adamw-bf16", config=str(asdict(coop)), forge_ms="0.25"))
        w.writerow(dict(shape="4096x4096", bt="4096", arm="adamw-bf16", config=str(asdict(removed)),
                        forge_ms="0.01"))
    assert best_per_cell(str(tmp_path / "kernel.csv")) == {("4096x4096", "4096", "adamw-bf16"): (0.25, coop)}
    table = write_report(str(tmp_path / "kernel.csv"), str(tmp_path / "report"))
    assert "| 4096x4096 | 4096 | adamw-bf16 | 0.2500 | gluon_coop | 0.2700 | 1.08x | 72.0% | 90.0% |" in table
    assert table.startswith("Measured on a device its CSV does not name")
    # with the call's ceilings beside the CSV, the report names the card, its ceilings and the command
    (tmp_path / "ceilings.json").write_text('{"copy_gbps": 3026.6, "bf16_tflops": 793.7, "torch": "2.11.0", '
                                            '"triton": "3.6.0", "device": "NVIDIA H100 80GB HBM3"}')
    table = write_report(str(tmp_path / "kernel.csv"), str(tmp_path / "report"))
    assert table.splitlines()[0] == (
        f"Measured on NVIDIA H100 80GB HBM3: copy 3,027 GB/s, cuBLAS bf16 794 TFLOP/s, torch 2.11.0, Triton 3.6.0 "
        f"(`{tmp_path / 'kernel.csv'}`). Regenerate: `python -m forge_mcore.bench.kernel --report "
        f"{tmp_path / 'kernel.csv'} --out {tmp_path / 'report'}`.")
    assert (tmp_path / "report" / "kernel_table.md").read_text() == table + "\n"
    # a call that recorded its card (``bench.common.environment``) names it too
    (tmp_path / "ceilings.json").write_text('{"copy_gbps": 3026.6, "bf16_tflops": 793.7, "torch": "2.11.0", '
                                            '"triton": "3.6.0", "device": "NVIDIA H100 80GB HBM3", '
                                            '"card": "GPU-fa94f608-79ee-53ff-b4c2-7412111c8c48"}')
    table = write_report(str(tmp_path / "kernel.csv"), str(tmp_path / "report"))
    assert table.startswith("Measured on NVIDIA H100 80GB HBM3 (card GPU-fa94f608-79ee-53ff-b4c2-7412111c8c48): "
                            "copy 3,027 GB/s")


def test_acceptance_counts_each_target_and_pairs_int8_with_bf16_within_one_call(tmp_path):
    """Issue #3's targets from two calls' CSVs: "no slower" at 0.97, main loop at 85%, floor at
    60% (int8 not in the floor target), and int8 against the bf16 step timed beside it in its own
    cell, or (CSVs before that column) against the bf16 cell of its own call only."""
    import csv
    from dataclasses import asdict

    from forge_mcore.bench.kernel import acceptance

    def call(name, cells, twins=None):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "ceilings.json").write_text('{"copy_gbps": 4000.0, "bf16_tflops": 800.0}')
        fields = ["shape", "bt", "arm", "forge_ms", "baseline_ms", "pct_floor", "speedup", "mainloop_eff",
                  "mainloop_ms", "floor_ms", "bytes_moved", "config"] + (["bf16_ms"] if twins else [])
        with open(folder / "kernel.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for shape, bt, arm, forge_ms, speedup, mainloop, floor in cells:
                # bytes: 4 MB of weight and states (1 µs at 4,000 GB/s) beside dY and X
                row = dict(shape=shape, bt=bt, arm=arm, forge_ms=forge_ms, baseline_ms=forge_ms * speedup,
                           pct_floor=floor, speedup=speedup, mainloop_eff=mainloop, mainloop_ms=forge_ms / 2,
                           floor_ms=1.0, bytes_moved=4_000_000 + 2 * bt * sum(map(int, shape.split("x"))),
                           config=str(asdict(CONFIGS[0])))
                if twins:
                    row["bf16_ms"] = twins.get((shape, bt, arm), "")  # (a grid's other arms: empty)
                w.writerow(row)
        return str(folder / "kernel.csv")

    a = call("a", [("4096x4096", 4096, "adamw-bf16", 1.00, 0.96, 86.0, 70.0),
                   ("4096x4096", 4096, "adamw-int8", 1.02, 0.99, 84.0, 70.0),
                   ("4096x4096", 512, "adamw-bf16", 0.10, 1.30, 95.0, 61.0),
                   ("4096x4096", 512, "adamw-int8", 0.20, 1.10, 95.0, 30.0)])
    b = call("b", [("1024x4096", 4096, "adamw-int8", 9.00, 1.00, 90.0, 70.0),
                   ("1024x4096", 512, "sgdm-bf16", 0.10, 1.20, 95.0, 59.0)])
    table = acceptance([a, b])
    assert "| BT ≥ 4096: no slower than the baseline (speedup) | all | 2 of 3 | 0.96–1.00× |" in table
    assert "| BT ≥ 4096: main-loop efficiency ≥ 85% | all | 2 of 3 | 84.00–90.00% |" in table
    assert "| BT ≤ 1024: ≥ 60% of floor | all | 1 of 2 | 59.00–61.00% |" in table
    # call b's int8 cell has no bf16 twin in its own call: one pair per BT range, from call a
    assert "| BT ≥ 4096: int8 no slower than bf16 (bf16 time ÷ int8 time) | adamw-int8 | 1 of 1 | 0.98–0.98× |" in table
    assert "| BT ≤ 1024: int8 no slower than bf16 (bf16 time ÷ int8 time) | adamw-int8 | 0 of 1 | 0.50–0.50× |" in table
    # BT <= 1024: the step against main loop + epilogue bytes at copy bandwidth (50 + 1 µs)
    # and the L2 cap: 50 µs x (1 + 4 MB / the 128 x 128 tiles' 268 MB of slab reads), below the 1 ms floor
    assert "| 4096x4096 | 512 | adamw-bf16 | 100.0 | 50.0 | 1.0 | 51.0 | 1.96 | 50.7 | 100% |" in table
    assert "| 4096x4096 | 4096 |" not in table.split("\n\n")[1]
    assert "graph_length.py" in table  # (the caveat on graphs of unequal length)
    assert "int8 against bf16: 0 of 2 cells with the bf16 step timed beside them" in table
    # a call whose int8 cells timed the bf16 step beside them: that time, not the bf16 cell's (0.10 ms)
    c = call("c", [("4096x4096", 512, "adamw-bf16", 0.10, 1.30, 95.0, 61.0),
                   ("4096x4096", 512, "adamw-int8", 0.20, 1.10, 95.0, 30.0)],
             twins={("4096x4096", 512, "adamw-int8"): 0.196})
    table = acceptance([c])
    assert "| BT ≤ 1024: int8 no slower than bf16 (bf16 time ÷ int8 time) | adamw-int8 | 1 of 1 | 0.98–0.98× |" in table
    assert "int8 against bf16: 1 of 1 cells with the bf16 step timed beside them" in table
    # targets are counted on one kind of device: two are refused, naming both
    for name, device in (("c", "NVIDIA H100 80GB HBM3"), ("a", "NVIDIA H200")):
        (tmp_path / name / "ceilings.json").write_text(
            f'{{"copy_gbps": 4000.0, "bf16_tflops": 800.0, "device": "{device}"}}')
    assert acceptance([c]).startswith("Measured on NVIDIA H100 80GB HBM3.")
    with pytest.raises(ValueError, match="H200.*H100|H100.*H200"):
        acceptance([a, c])


def test_a_sweep_with_no_configs_to_time_fails_before_measuring(monkeypatch, tmp_path, capsys):
    from forge_mcore.bench import kernel as bench
    from forge_mcore.kernels import configs

    monkeypatch.setattr(configs, "CANDIDATES", ())
    out = tmp_path / "out"
    with pytest.raises(SystemExit):
        bench.main(["--out", str(out), "--sweep", "--sweep-configs", "candidates"])
    assert "--sweep-configs all" in capsys.readouterr().err
    assert not out.exists()
    assert bench.sweep_pool("all", ("gluon_tall",)) and all(
        c.kernel == "gluon_tall" for c in bench.sweep_pool("all", ("gluon_tall",)))


def test_the_sweep_skips_gluon_configs_that_would_run_the_triton_kernel(monkeypatch):
    w = torch.zeros(256, 256, dtype=torch.bfloat16)
    dy = torch.zeros(64, 256, dtype=torch.bfloat16)
    bf16, int8 = (fm.ForgeParamState.create(w, "adamw", {}, codec, "bf16") for codec in ("bf16", "int8"))
    tall = [c for c in CONFIGS if c.kernel == "gluon_tall" and c.epilogue_stages == 2]  # a buffer per consumer
    by_stages = {c.num_stages: c for c in tall}
    assert runs_as_labelled(by_stages[4], bf16, dy)
    assert not runs_as_labelled(by_stages[5], bf16, dy)  # its shared memory: the Triton kernel runs
    assert runs_as_labelled(by_stages[4], int8, dy)  # int8 states run on tall tiles too
    assert all(runs_as_labelled(c, int8, dy) for c in CONFIGS if c.kernel == "triton")
    monkeypatch.setenv("FORGE_GLUON", "0")
    assert not runs_as_labelled(by_stages[4], bf16, dy)


def test_a_csvs_own_architecture_wins_over_the_one_the_file_records_for_its_device(monkeypatch, tmp_path):
    """The file's record only stands in for a ceilings.json that names no architecture."""
    import csv
    import json
    from dataclasses import asdict

    from forge_mcore.bench.kernel import write_winners

    path = tmp_path / "winners.csv"
    device = "NVIDIA Graphics Device"  # (an engineering sample's name: not one architecture's)
    winners.write([(device, "sm_90", winners.key_cells(_key(1024, 4096, 512)), CONFIGS[0], 0.1)], path=str(path))
    monkeypatch.setattr(winners, "WINNERS_CSV", str(path))
    (tmp_path / "ceilings.json").write_text(json.dumps({"device": device, "arch": "sm_100"}))
    with open(tmp_path / "kernel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["shape", "bt", "arm", "forge_ms", "config"])
        w.writeheader()
        w.writerow(dict(shape="4096x4096", bt="512", arm="adamw-bf16", forge_ms="0.07", config=str(asdict(CONFIGS[1]))))
    assert write_winners([str(tmp_path / "kernel.csv")]) == 2
    archs = {cells[1:4]: arch for _, arch, cells, _, _ in winners.read(str(path))}
    assert archs == {("4096", "4096", "512"): "sm_100", ("1024", "4096", "512"): "sm_90"}


def test_prune_keeps_a_config_that_exactly_fits_and_drops_k_chunks_longer_than_bt():
    for c in CONFIGS:
        assert prune_configs((c,), 4096, 4096, 4096, 2, c.smem_bytes(2)) == [c]
        with pytest.raises(ValueError, match="no tile config fits"):
            prune_configs((c,), 4096, 4096, 4096, 2, c.smem_bytes(2) - 1)
    short = prune_configs(CONFIGS, 4096, 4096, 20, 2)  # BT 20: K chunks of at most 32
    assert short and all(c.block_k == 32 for c in short)
    # BT 10: no chunk of 16 or less in the list, so the smallest tile that fits, alone
    assert prune_configs(CONFIGS, 4096, 4096, 10, 2) == [min(CONFIGS, key=lambda c: (c.block_m * c.block_n, c.block_k))]


def test_tuned_config_reports_the_choice_of_the_current_forge_gluon_setting(monkeypatch):
    """What the benchmark records as a cell's config: the tuner's choice under this FORGE_GLUON."""
    w = torch.zeros(1024, 4096, dtype=torch.bfloat16)
    state = fm.ForgeParamState.create(w, "adamw", {}, "bf16", "bf16")
    dy = torch.zeros(300, 1024, dtype=torch.bfloat16)
    key = ops._tune_key(dy, w, state, None)
    gluon_cfg, triton_cfg = CONFIGS[-1], CONFIGS[0]
    monkeypatch.setattr(ops, "_tuned", {(key, True): gluon_cfg, (key, False): triton_cfg})
    monkeypatch.setenv("FORGE_GLUON", "1")
    assert ops.tuned_config(dy, w, state) == gluon_cfg
    monkeypatch.setenv("FORGE_GLUON", "0")
    assert ops.tuned_config(dy, w, state) == triton_cfg


def _config_ab_check(**env: str) -> subprocess.CompletedProcess:
    """``scripts/device/config_ab.py`` with CHECK=1 (no GPU work) and ``env``."""
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "device", "config_ab.py")
    return subprocess.run([sys.executable, script], env={**os.environ, "CHECK": "1", **env}, capture_output=True,
                          text=True, timeout=120)


def test_config_ab_refuses_a_replacement_its_cells_winner_cannot_take_before_any_tensor():
    """Session 50 spent a device call learning that a cooperative-tall row takes neither one epilogue stage nor
    prefetch: the script checks VARY against the card's committed winners of its cells first."""
    card = "NVIDIA H100 80GB HBM3"
    cell = dict(DEVICE=card, REFERENCE="winner", CELLS="151936x4096:16384", ARMS="adamw-int8")
    assert winners.load(winners.WINNERS_CSV)[(card, "sm_90")], "the H100's rows are the references here"
    refused = _config_ab_check(**cell, VARY="tile_fill=lsu;epilogue_stages=1")
    assert refused.returncode != 0 and "ValueError" in refused.stderr and "epilogue_stages" in refused.stderr
    accepted = _config_ab_check(**cell, VARY="tile_fill=lsu;block_k=64,num_stages=3")
    assert accepted.returncode == 0, accepted.stderr
    assert f"VARY applies to all 1 references of ['151936x4096:16384'] x ['adamw-int8'] on {card}" in accepted.stdout
    unnamed = _config_ab_check(**{**cell, "DEVICE": ""}, CUDA_VISIBLE_DEVICES="", VARY="group_m=4")
    assert unnamed.returncode != 0 and "DEVICE=one of" in unnamed.stderr


def test_config_ab_summary_names_a_gluon_config_that_ran_its_triton_geometry(monkeypatch):
    """Session 52: the LM head's AdamW bf16 row with six stages read "bits False" in config_ab.py; its Gluon
    kernel does not fit (three bf16 tiles past shared memory; int8's fit) and the step ran its Triton geometry,
    whose accumulation differs. The summary says so (a CSV's "True"/"False" too); a file without the column reads
    as before."""
    monkeypatch.setenv("FORGE_GLUON", "1")
    spec = importlib.util.spec_from_file_location(
        "config_ab", os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "device", "config_ab.py"))
    config_ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(config_ab)
    from dataclasses import asdict

    from forge_mcore.kernels.configs import TileConfig
    reference = TileConfig(block_m=256, block_n=128, block_k=32, group_m=8, num_warps=8, num_stages=5,
                           split_n=2, epilogue_stages=2, kernel="gluon_coop_tall", wave_sync=600000)
    six = reference.replaced("num_stages=6")
    w, dy = torch.zeros(256, 256, dtype=torch.bfloat16), torch.zeros(64, 256, dtype=torch.bfloat16)
    fits = {sd: [runs_as_labelled(c, fm.ForgeParamState.create(w, "adamw", {}, sd, "bf16"), dy)
                 for c in (reference, six)] for sd in ("bf16", "int8")}
    assert fits == {"bf16": [True, False], "int8": [True, True]}

    def row(cfg, ref, bits, ran=None):
        r = dict(cell="151936x4096:16384", arm="adamw-bf16", config=str(asdict(cfg)), reference=ref,
                 bits_equal_reference=bits, ms=30.0 if bits else float("nan"), speedup=1.0 if bits else float("nan"))
        return r if ran is None else {**r, "runs_as_labelled": ran}

    lines = config_ab.summary([row(reference, True, True, True), row(six, False, False, False)])
    assert lines[1].endswith("num_stages=6: nan us xnan bits False (ran its Triton geometry)"), lines
    assert not config_ab.summary([row(reference, True, True), row(six, False, False)])[1].endswith(")")
