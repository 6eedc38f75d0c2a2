"""The kernel benchmark's FORGE arm (``bench.kernel.ForgeArm``): what every timing tool builds a cell from."""

from __future__ import annotations

import csv

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
