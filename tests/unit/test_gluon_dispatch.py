"""Which steps the Gluon kernel takes (``gluon_wgrad.applies``) and which configs name it.
The kernel itself needs a Hopper GPU (``tests/functional/test_kernel_gpu.py``); its sm_90
compile is checked in ``test_gluon_compile.py``."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import forge_mcore as fm
from forge_mcore.kernels import gluon_wgrad
from forge_mcore.kernels.configs import CANDIDATES, CONFIGS, GLUON_KERNELS, TileConfig

WS = TileConfig(64, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_ws")
COOP = TileConfig(128, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_coop")
TALL = dataclasses.replace(COOP, kernel="gluon_tall")
BF16 = torch.empty(1, dtype=torch.bfloat16)


def _state(codec="bf16", store="bf16", rule="adamw", group=None):
    dtype = torch.float32 if store == "fp32" else torch.bfloat16
    return fm.ForgeParamState.create(torch.zeros(64, 128, dtype=dtype), rule, group or {}, codec, store)


def test_applies_to_a_plain_step_with_every_operand_on_tma():
    assert gluon_wgrad.applies(WS, _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(WS, _state(rule="sgd"), BF16, None, True, True)  # one state
    assert gluon_wgrad.applies(WS, _state(rule="sgd", store="fp32"), BF16, None, True, True)  # an fp32 weight
    assert gluon_wgrad.applies(WS, _state(codec="int8"), BF16, None, True, True)  # int8 codes, scales by pointer


@pytest.mark.parametrize("why, args", [
    ("the Triton kernel's config", (dataclasses.replace(WS, kernel="triton"), _state(), BF16, None, True, True)),
    ("accumulate mode", (WS, None, BF16, None, True, True)),
    ("an earlier micro-batch's partial gradient", (WS, _state(), BF16, torch.zeros(1), True, True)),
    ("pointer slabs", (WS, _state(), BF16, None, False, True)),
    ("pointer tiles", (WS, _state(), BF16, None, True, False)),
    ("fp32 operands", (WS, _state(store="fp32"), torch.empty(1), None, True, True)),
    ("fp8 states", (WS, _state(codec="fp8"), BF16, None, True, True)),
    ("an fp32 master", (WS, _state(codec="fp32", store="fp32_master"), BF16, None, True, True)),
    ("stochastic rounding", (WS, _state(store="bf16_sr"), BF16, None, True, True)),
    # 5 slabs of 24 KB + 2 tile buffers of 64x128 x (bf16 weight + 2 fp32 moments) = 280 KB
    ("fp32 moments beside two tile buffers", (WS, _state(codec="fp32"), BF16, None, True, True)),
    # 5 slabs + 2 tile buffers of 64x128 x (bf16 weight + 3 bf16 states) = 248 KB
    ("three states", (WS, _state(rule="adam", group={"amsgrad": True}), BF16, None, True, True)),
    # 5 slabs + 2 tile buffers of 64x128 x (fp32 weight + 2 bf16 moments) = 248 KB
    ("an fp32 weight beside two moments", (WS, _state(store="fp32"), BF16, None, True, True)),
])
def test_everything_else_takes_the_triton_kernel(why, args):
    assert not gluon_wgrad.applies(*args), why


@pytest.mark.parametrize("bad", [
    dict(kernel="cuda"),
    dict(kernel="gluon"),  # the non-persistent Gluon kernel, removed in session 8
    dict(split_n=1, block_n=64),
    dict(prefetch=True),
    dict(maxnreg=128),
    dict(block_k=128),  # BLOCK_K 32 or 64
    dict(num_warps=4),  # two consumer warpgroups
    dict(epilogue_stages=3),  # a tile buffer each
    dict(block_m=128),  # a ping-pong tile is one consumer's 64 rows
    dict(kernel="gluon_coop"),  # a cooperative tile is both consumers' 128 rows
])
def test_configs_the_gluon_kernel_cannot_run_are_refused(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(WS, **bad)


def test_tall_tiles_pass_through_a_64_row_buffer():
    # 4 slabs of 32 KB + 2 buffers of 64x128 x (bf16 weight + 2 bf16 moments) = 224 KB
    assert gluon_wgrad.applies(TALL, _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(TALL, _state(codec="int8"), BF16, None, True, True)
    five = dataclasses.replace(TALL, num_stages=5)
    assert not gluon_wgrad.applies(five, _state(), BF16, None, True, True)  # 256 KB
    assert gluon_wgrad.applies(five, _state(rule="sgd", group={"momentum": 0.9}), BF16, None, True, True)
    assert TALL.guard_tile == (64, 128) and TALL.units_per_tile == 1 and COOP.units_per_tile == 2


def test_ping_pong_consumers_may_share_one_tile_buffer_for_a_deeper_ring():
    # one buffer of 64x128 x (bf16 weight + 2 bf16 moments) = 48 KB beside 5 slabs of 32 KB: 208 KB
    shared = dataclasses.replace(TALL, num_stages=5, epilogue_stages=1)
    assert gluon_wgrad.applies(shared, _state(), BF16, None, True, True)
    assert not gluon_wgrad.applies(dataclasses.replace(shared, num_stages=6), _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(dataclasses.replace(shared, num_stages=6), _state(rule="sgd", group={"momentum": 0.9}),
                               BF16, None, True, True)  # 192 + 32 KB
    for other in (WS, COOP):  # (cooperative consumers run their epilogues at once)
        with pytest.raises(ValueError, match="tall ones may share one"):
            dataclasses.replace(other, epilogue_stages=1)


def test_cooperative_buffers_count_one_consumers_half_tile():
    # 4 slabs of 32 KB + 2 half-tile buffers of 64x128 x (bf16 weight + 2 bf16 moments) = 224 KB
    assert gluon_wgrad.applies(COOP, _state(), BF16, None, True, True)
    # 5 slabs: 256 KB with two bf16 moments, 224 KB with one (SGD-momentum) or int8 codes
    five = dataclasses.replace(COOP, num_stages=5)
    assert not gluon_wgrad.applies(five, _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(five, _state(rule="sgd", group={"momentum": 0.9}), BF16, None, True, True)
    assert gluon_wgrad.applies(five, _state(codec="int8"), BF16, None, True, True)


def test_cooperative_tall_tiles_give_each_consumer_a_128_row_half_in_two_passes():
    coop_tall = dataclasses.replace(COOP, block_m=256, block_k=32, num_stages=5, kernel="gluon_coop_tall")
    assert (coop_tall.row_blocks, coop_tall.units_per_tile, coop_tall.passes) == (4, 2, 2)
    assert coop_tall.cooperative and coop_tall.guard_tile == (64, 128)
    assert (TALL.passes, COOP.passes, WS.passes) == (2, 1, 1)
    assert coop_tall.triton_geometry.block_m == 64  # the same guard tiles where the Triton kernel runs
    # 5 slabs of (256 + 128) x 32 x 2 B + 2 buffers of 64x128 x (bf16 weight + 2 bf16 moments) = 216 KB
    assert gluon_wgrad.applies(coop_tall, _state(), BF16, None, True, True)
    assert not gluon_wgrad.applies(dataclasses.replace(coop_tall, num_stages=6), _state(), BF16, None, True, True)
    # a BK 64 ring is three-deep with 4 B per element (144 + 64 KB), not with AdamW's bf16 moments
    three = dataclasses.replace(coop_tall, block_k=64, num_stages=3)
    assert gluon_wgrad.applies(three, _state(codec="int8"), BF16, None, True, True)
    assert not gluon_wgrad.applies(three, _state(), BF16, None, True, True)
    for bad in (dict(block_m=128), dict(epilogue_stages=1)):  # 256 rows; a buffer per consumer
        with pytest.raises(ValueError):
            dataclasses.replace(coop_tall, **bad)


def test_tall_units_may_have_a_buffer_per_pass():
    coop_tall = TileConfig(256, 128, 32, 8, 8, 4, split_n=2, epilogue_stages=4, kernel="gluon_coop_tall")
    # 4 slabs of (256 + 128) x 32 x 2 B + 4 buffers of 64x128 x (bf16 weight + 2 int8 moments) = 224 KB
    assert gluon_wgrad.applies(coop_tall, _state(codec="int8"), BF16, None, True, True)
    assert not gluon_wgrad.applies(dataclasses.replace(coop_tall, num_stages=5), _state(codec="int8"), BF16, None,
                                   True, True)  # 248 KB
    assert not gluon_wgrad.applies(coop_tall, _state(), BF16, None, True, True)  # bf16 moments: 288 KB
    tall = TileConfig(128, 128, 32, 8, 8, 6, split_n=2, epilogue_stages=4, kernel="gluon_tall")
    assert gluon_wgrad.applies(tall, _state(codec="int8"), BF16, None, True, True)  # 96 + 128 KB
    assert coop_tall.triton_geometry.epilogue_stages == 2  # where the Triton kernel runs: its pipelined epilogue
    for other in (WS, COOP):  # one pass per unit
        with pytest.raises(ValueError, match="one per pass: 4"):
            dataclasses.replace(other, epilogue_stages=4)
    with pytest.raises(ValueError, match="the Triton kernel's pipeline depth"):
        dataclasses.replace(coop_tall, kernel="triton", block_m=64)
    with pytest.raises(ValueError, match="tile_fill"):  # cp.async fills: one buffer per consumer
        dataclasses.replace(coop_tall, tile_fill="lsu")


def test_every_gluon_config_fits_shared_memory_with_one_bf16_state():
    gluon = [c for c in CONFIGS + CANDIDATES if c.kernel in GLUON_KERNELS]
    assert {c.kernel for c in gluon} == set(GLUON_KERNELS)
    for config in gluon:
        assert gluon_wgrad.applies(config, _state(rule="sgd", group={"momentum": 0.9}), BF16, None, True, True), config


def test_replaced_parses_field_values_and_validates_the_result():
    tall = WS.replaced("kernel=gluon_tall,block_m=128,group_m=4")
    assert (tall.kernel, tall.block_m, tall.group_m, tall.num_stages) == ("gluon_tall", 128, 4, WS.num_stages)
    assert WS.replaced("maxnreg=None,prefetch=False") == WS
    assert TileConfig(64, 64, 64, 8, 4, 3).replaced("prefetch=True,maxnreg=128").prefetch is True
    with pytest.raises(ValueError, match="not TileConfig fields"):
        WS.replaced("stages=4")
    with pytest.raises(ValueError, match="two consumer warpgroups"):  # a Gluon config must stay one
        WS.replaced("num_warps=4")


def test_tile_fill_lsu_is_a_gluon_choice_with_a_buffer_per_consumer():
    lsu = WS.replaced("tile_fill=lsu")
    assert lsu.tile_fill == "lsu" and lsu.triton_geometry.tile_fill == "tma"
    assert gluon_wgrad.applies(lsu, _state(), BF16, None, True, True)
    for bad in ("tile_fill=dma", "tile_fill=lsu,kernel=triton,num_warps=4,block_m=64",
                "tile_fill=lsu,kernel=gluon_tall,block_m=128,epilogue_stages=1"):
        with pytest.raises(ValueError, match="tile_fill"):
            WS.replaced(bad)


def test_a_winners_row_keeps_tile_fill_and_an_older_row_reads_as_tma():
    from forge_mcore.kernels import winners

    lsu = WS.replaced("tile_fill=lsu")
    row = winners.config_to_row(lsu)
    assert row["tile_fill"] == "lsu" and winners._config_from_row(row) == lsu
    del row["tile_fill"]  # a file written before the field
    assert winners._config_from_row(row) == WS


def test_fast_division_is_a_gluon_choice_that_a_winners_row_keeps():
    from forge_mcore.kernels import winners

    fast = WS.replaced("fast_division=True")
    assert fast.fast_division and not fast.triton_geometry.fast_division
    assert gluon_wgrad.applies(fast, _state(), BF16, None, True, True)  # (bf16 states: the kernel without it)
    with pytest.raises(ValueError, match="fast_division"):
        TileConfig(64, 64, 64, 8, 4, 3, fast_division=True)
    row = winners.config_to_row(fast)
    assert row["fast_division"] == "True" and winners._config_from_row(row) == fast
    del row["fast_division"]  # a file written before the field
    assert winners._config_from_row(row) == WS


def test_tile_ring_frees_half_a_unit_for_a_deeper_slab_ring():
    from forge_mcore.kernels import winners

    ring6, ring7 = WS.replaced("tile_ring=3,num_stages=6"), WS.replaced("tile_ring=3,num_stages=7")
    # AdamW bf16: 6 slabs of (64 + 128) x 64 x 2 B (144 KB) + 3 halves of 64x64 x 6 B (72 KB) = 216 KB;
    # a buffer per consumer (96 KB) leaves room for five slabs only
    assert gluon_wgrad.applies(ring6, _state(), BF16, None, True, True)
    assert not gluon_wgrad.applies(WS.replaced("num_stages=6"), _state(), BF16, None, True, True)
    assert not gluon_wgrad.applies(ring7, _state(), BF16, None, True, True)
    # 4 B per element (int8 moments; SGD-momentum's one bf16 state): 168 + 48 KB
    assert gluon_wgrad.applies(ring7, _state(codec="int8"), BF16, None, True, True)
    assert gluon_wgrad.applies(ring7, _state(rule="sgd", group={"momentum": 0.9}), BF16, None, True, True)
    # two buffers: seven slabs beside AdamW's bf16 moments (168 + 48 KB), eight with 4 B (192 + 32 KB)
    two7, two8 = WS.replaced("tile_ring=2,num_stages=7"), WS.replaced("tile_ring=2,num_stages=8")
    assert gluon_wgrad.applies(two7, _state(), BF16, None, True, True)
    assert not gluon_wgrad.applies(two8, _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(two8, _state(codec="int8"), BF16, None, True, True)
    assert not ring7.triton_geometry.tile_ring
    for bad in ("tile_ring=3,tile_fill=lsu", "tile_ring=3,kernel=gluon_tall,block_m=128", "tile_ring=1",
                "tile_ring=4", "tile_ring=True"):
        with pytest.raises(ValueError, match="tile_ring"):
            WS.replaced(bad)
    for cfg in (ring6, two7):
        row = winners.config_to_row(cfg)
        assert row["tile_ring"] == str(cfg.tile_ring) and winners._config_from_row(row) == cfg
    # written before the field, and as the boolean it was in session 26 (True: three buffers)
    assert winners._config_from_row({**row, "tile_ring": "True", "num_stages": "6"}) == ring6
    assert winners._config_from_row({**row, "tile_ring": "False"}) == WS.replaced("num_stages=7")
    del row["tile_ring"]
    assert winners._config_from_row(row) == WS.replaced("num_stages=7")


def test_first_fill_after_is_a_gluon_count_of_slabs_that_a_winners_row_keeps():
    from forge_mcore.kernels import winners

    late = WS.replaced("tile_ring=3,num_stages=7,first_fill_after=2")
    assert late.first_fill_after == 2 and not late.triton_geometry.first_fill_after
    assert WS.replaced("first_fill_after=5").first_fill_after == 5  # up to the ring's depth
    for bad in ("first_fill_after=6", "first_fill_after=-1", "first_fill_after=True"):
        with pytest.raises(ValueError, match="first_fill_after"):
            WS.replaced(bad)  # (five stages)
    with pytest.raises(ValueError, match="first_fill_after"):
        TileConfig(64, 64, 64, 8, 4, 3, first_fill_after=1)  # the Triton kernel has no tile producer
    row = winners.config_to_row(late)
    assert row["first_fill_after"] == "2" and winners._config_from_row(row) == late
    del row["first_fill_after"]  # a file written before the field
    assert winners._config_from_row(row) == late.replaced("first_fill_after=0")


def test_serial_fills_is_a_tile_rings_flag_that_a_winners_row_keeps():
    from forge_mcore.kernels import winners

    serial = WS.replaced("tile_ring=2,num_stages=7,serial_fills=True")
    assert serial.serial_fills and not serial.triton_geometry.serial_fills
    for bad in ("serial_fills=True", "tile_ring=2,serial_fills=1"):  # no ring; not a bool
        with pytest.raises(ValueError, match="serial_fills"):
            WS.replaced(bad)
    row = winners.config_to_row(serial)
    assert row["serial_fills"] == "True" and winners._config_from_row(row) == serial
    del row["serial_fills"]  # a file written before the field
    assert winners._config_from_row(row) == serial.replaced("serial_fills=False")


def test_wave_sync_is_a_gluon_kernels_bounded_wait_that_a_winners_row_keeps():
    from forge_mcore.kernels import winners
    from forge_mcore.kernels.configs import WAVE_SYNC_MAX

    synced = WS.replaced("wave_sync=50000")
    assert synced.wave_sync == 50000 and not synced.triton_geometry.wave_sync
    for bad in ("wave_sync=-1", f"wave_sync={WAVE_SYNC_MAX + 1}", "wave_sync=True"):  # out of range; not an int
        with pytest.raises(ValueError, match="wave_sync"):
            WS.replaced(bad)
    with pytest.raises(ValueError, match="wave_sync"):
        TileConfig(64, 64, 64, 8, 4, 3, wave_sync=1000)  # the Triton kernel's programs are not persistent
    row = winners.config_to_row(synced)
    assert row["wave_sync"] == "50000" and winners._config_from_row(row) == synced
    del row["wave_sync"]  # a file written before the field
    assert winners._config_from_row(row) == synced.replaced("wave_sync=0")
