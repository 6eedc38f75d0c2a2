"""The kernel benchmark's FORGE arm (``bench.kernel.ForgeArm``): what every timing tool builds a cell from."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict

import pytest
import torch

from forge_mcore.bench.common import L2_BYTES, rotation_count, write_csv
from forge_mcore.bench.kernel import ForgeArm, cell_operands


def test_the_forge_arm_rotates_independent_sets_that_stream_twice_the_l2():
    arm = ForgeArm.build("96x200", 48, "adamw-bf16", device="cpu")
    dy, x, w0 = cell_operands("96x200", 48, device="cpu")
    assert torch.equal(arm.dy, dy) and torch.equal(arm.x, x) and torch.equal(arm.w0, w0)  # one seeded draw
    assert dy.shape == (48, 96) and x.shape == (48, 200) and w0.shape == (96, 200)
    # weight + two bf16 moments, each read and written, and dY and X read once
    assert arm.bytes_moved == 2 * 3 * w0.nbytes + dy.nbytes + x.nbytes
    sets = len(arm.weights)
    assert sets == rotation_count(arm.bytes_moved) == 8  # a tiny cell: the cap
    assert len(arm.states) == len(arm.hypers) == sets
    assert len({w.data_ptr() for w in arm.weights}) == sets and all(torch.equal(w, w0) for w in arm.weights)
    big = 2 * L2_BYTES // arm.bytes_moved
    assert rotation_count(arm.bytes_moved * big) < sets  # fewer sets where one is large


def test_write_csv_takes_its_columns_from_the_first_row(tmp_path):
    path = tmp_path / "rows.csv"
    write_csv(str(path), [dict(shape="4096x4096", ms=0.25), dict(shape="1024x4096", ms=0.0625)])
    assert list(csv.DictReader(open(path))) == [dict(shape="4096x4096", ms="0.25"),
                                                dict(shape="1024x4096", ms="0.0625")]


@pytest.mark.parametrize("arm,per_param", [("adamw-bf16", 12), ("sgdm-bf16", 8), ("lion-bf16", 8),
                                           ("adamw-int8", 2 * (2 + 2 * (1 + 4 / 64)))])
def test_each_arm_moves_its_weight_and_every_states_codes_and_scales_both_ways(arm, per_param):
    """Issue #3's bytes: AdamW bf16 12 B/param, SGD-momentum and Lion bf16 8; int8 moments their
    codes and their fp32 scales (one per 64 columns); each read and written, dY and X read once."""
    forge = ForgeArm.build("128x256", 48, arm, device="cpu")
    one_way = forge.w0.numel() * per_param / 2
    assert forge.bytes_moved == 2 * one_way + forge.dy.nbytes + forge.x.nbytes
    assert forge.tile_bytes == one_way


def test_rotation_count_streams_at_least_twice_the_l2_per_replay():
    assert (rotation_count(2 * L2_BYTES), rotation_count(L2_BYTES), rotation_count(L2_BYTES // 2)) == (1, 2, 4)
    for per_set in (L2_BYTES // 3 + 1, L2_BYTES // 4 + 1, 3 * L2_BYTES // 4):  # (below the cap of 8)
        sets = rotation_count(per_set)
        assert sets * per_set >= 2 * L2_BYTES > (sets - 1) * per_set, per_set


def test_ceilings_count_a_copys_bytes_read_and_written(monkeypatch):
    """The floor's bytes count each tensor read and written, so the copy ceiling counts both too:
    1 Gi bf16 elements copied in 1 ms is 4,295 GB/s; 2 x 8192^3 FLOPs in 2 ms is 550 TFLOP/s."""
    from forge_mcore.bench import common

    monkeypatch.setattr(common, "_copy_ms", lambda n, device: 1.0)
    monkeypatch.setattr(common, "_mm_ms", lambda n, device: 2.0)
    ceilings = common.measure_ceilings("cpu")
    assert ceilings.copy_gbps == pytest.approx(4294.967296)
    assert ceilings.bf16_tflops == pytest.approx(549.755813888)


@pytest.mark.parametrize("copy_gbps,tflops,floor_ms", [(1.0, 1.0, 0.43008), (1e6, 1e-3, 3.145728)])
def test_a_cells_ratios_follow_the_issues_definitions(monkeypatch, copy_gbps, tflops, floor_ms):
    """floor = max(bytes / copy ceiling, 2 M N BT / cuBLAS ceiling) (here 430,080 B and 3,145,728 FLOPs:
    bytes-bound, then FLOP-bound), % of floor = floor / FORGE, speedup = the baseline per buffer set /
    FORGE, main-loop efficiency = cuBLAS / main loop. The cell runs on the CPU; its timing is stood in
    for by one call of each arm and fixed times."""
    from forge_mcore import ops
    from forge_mcore.bench import common
    from forge_mcore.bench import kernel as bench

    times = dict(forge=0.5, mainloop=0.4, cublas=0.3, baseline=0.6)  # per replay of each arm's calls
    calls = {}

    def time_graphs(arms, reps):
        for name, fns in arms.items():
            for fn in fns if isinstance(fns, list) else [fns]:
                fn()
            calls[name] = len(fns) if isinstance(fns, list) else 1
        return {name: times[name] for name in arms}

    monkeypatch.setattr(common, "time_graphs", time_graphs)
    monkeypatch.setenv("FORGE_BACKEND", "triton")
    monkeypatch.setattr(ops, "tuned_config", lambda *a: ops.INTERPRETER_CONFIG)  # (the interpreter's, not tuned)
    cell = bench.run_cell("128x256", 48, "adamw-bf16", common.Ceilings(copy_gbps, tflops), device="cpu")
    sets = calls["forge"]
    assert calls["baseline"] == sets + 1  # a wgrad per set and one optimizer step over all of them
    assert cell.bytes_moved == 430080 and cell.floor_ms == pytest.approx(floor_ms)
    assert cell.pct_floor == pytest.approx(100 * floor_ms / 0.5)
    per_set = 0.6 * (sets + 1) / sets
    assert cell.baseline_ms == pytest.approx(per_set) and cell.speedup == pytest.approx(per_set / 0.5)
    assert cell.mainloop_eff == pytest.approx(75.0)


def test_the_lion_baseline_is_compiled_for_each_cells_shapes_and_steps_as_the_eager_rule():
    """Lion's baseline (torch.compile'd: torch has no Lion) gets a static-shape compile of its own in every cell:
    with one dynamo cache across cells, a later cell recompiled with dynamic shapes and then served every shape
    after it (automatic dynamic; the third cell here compiled nothing). Each cell's step is the eager rule's,
    bf16 rounding aside, and building the baseline steps no weight."""
    from torch._dynamo.utils import counters

    from forge_mcore.bench.kernel import _baseline, _lion_step

    hp = dict(lr=0.1, weight_decay=0.1)  # an update (0.1) above the roundings' gap on weights up to ~4
    for rows in (8, 24, 40):
        params = [torch.nn.Parameter(torch.randn(rows, 16).bfloat16()) for _ in range(2)]
        for p in params:
            p.grad = torch.randn_like(p)
        start = [p.detach().clone() for p in params]
        graphs = counters["stats"]["unique_graphs"]
        step, label = _baseline("lion", params, hp)
        step()
        assert label == "torch.compile Lion"
        assert counters["stats"]["unique_graphs"] == graphs + 1  # this cell's own, for its two weights
        eager, eager_m = [w.clone() for w in start], [torch.zeros_like(w) for w in start]
        _lion_step(eager, [p.grad for p in params], eager_m, hp["lr"], hp["weight_decay"], 0.9, 0.99)
        for p, w, w0 in zip(params, eager, start):
            assert not torch.equal(p.detach(), w0)
            # eager rounds to bf16 twice (the decay, then the update), the compiled step once: 1.5 ulp apart
            torch.testing.assert_close(p.detach(), w, rtol=2 ** -6, atol=1e-3)


def _bench_call(folder, cells, twins=None, sweep=()):
    """A benchmark call's kernel.csv (and ceilings.json, and a sweep.csv of (shape, BT, arm, config, ms))."""
    from forge_mcore.kernels.configs import CONFIGS

    folder.mkdir()
    (folder / "ceilings.json").write_text(json.dumps(dict(copy_gbps=4000.0, bf16_tflops=800.0)))
    rows = [dict(shape=shape, bt=bt, arm=arm, forge_ms=ms, baseline_ms=ms * speedup, pct_floor=floor,
                 speedup=speedup, mainloop_eff=eff, mainloop_ms=ms / 2, floor_ms=1.0, config=str(asdict(CONFIGS[0])),
                 bytes_moved=4_000_000 + 2 * bt * sum(map(int, shape.split("x"))),
                 bf16_ms=(twins or {}).get((shape, bt, arm), "")) for shape, bt, arm, ms, speedup, eff, floor in cells]
    write_csv(str(folder / "kernel.csv"), rows)
    if sweep:
        write_csv(str(folder / "sweep.csv"), [dict(shape=shape, bt=bt, arm=arm, config=str(asdict(cfg)), forge_ms=ms)
                                              for shape, bt, arm, cfg, ms in sweep])
    return str(folder / "kernel.csv")


def test_acceptance_counts_a_cell_exactly_at_each_target_and_bt_1024_as_a_small_cell(tmp_path):
    """Targets are "ratio >= 0.97", ">= 85%", ">= 60% of floor": a cell at the threshold meets it;
    and BT 1024 is a "BT <= 1024" cell (the floor target, and int8 against bf16)."""
    from forge_mcore.bench.kernel import acceptance

    table = acceptance([_bench_call(tmp_path / "a", [("4096x4096", 4096, "adamw-bf16", 1.0, 0.97, 85.0, 50.0),
                                                     ("4096x4096", 1024, "adamw-bf16", 0.97, 1.2, 90.0, 60.0),
                                                     ("4096x4096", 1024, "adamw-int8", 1.0, 1.2, 90.0, 40.0)])])
    assert "| BT ≥ 4096: no slower than the baseline (speedup) | adamw-bf16 | 1 of 1 | 0.97–0.97× |" in table
    assert "| BT ≥ 4096: main-loop efficiency ≥ 85% | adamw-bf16 | 1 of 1 | 85.00–85.00% |" in table
    assert "| BT ≤ 1024: ≥ 60% of floor | adamw-bf16 | 1 of 1 | 60.00–60.00% |" in table
    assert "| BT ≤ 1024: int8 no slower than bf16 (bf16 time ÷ int8 time) | adamw-int8 | 1 of 1 | 0.97–0.97× |" in table


def test_int8_against_its_twin_takes_the_grid_step_the_twin_was_timed_beside(tmp_path):
    """A sweep that found a faster int8 config moves the int8 cell's FORGE time, but the bf16 step
    was timed rep by rep beside the grid's int8 step: the ratio is of those two (0.196 / 0.20)."""
    from forge_mcore.bench.kernel import acceptance
    from forge_mcore.kernels.configs import CONFIGS

    cell = ("4096x4096", 512, "adamw-int8")
    path = _bench_call(tmp_path / "c", [(*cell, 0.20, 1.10, 95.0, 30.0)], twins={cell: 0.196},
                       sweep=[(*cell, CONFIGS[1], 0.10)])
    table = acceptance([path])
    assert "| BT ≤ 1024: ≥ 60% of floor |" not in table  # (int8 cells are not in the floor target)
    assert "| BT ≤ 1024: int8 no slower than bf16 (bf16 time ÷ int8 time) | adamw-int8 | 1 of 1 | 0.98–0.98× |" in table


def test_a_row_from_before_tile_ring_counts_true_as_three_buffers():
    from forge_mcore.bench.kernel import _current_config
    from forge_mcore.kernels.configs import CONFIGS

    ring3 = next(c for c in CONFIGS if c.tile_ring == 3 and c.num_stages == 7 and not c.fast_division)
    assert _current_config(str({**asdict(ring3), "tile_ring": True})) == ring3
    assert _current_config(str({**asdict(ring3), "tile_ring": False})) is None  # seven-deep without a ring: gone
