"""Which steps the Gluon kernels take (``gluon_wgrad.applies``) and which configs name them.
The kernels themselves need a Hopper GPU (``tests/functional/test_kernel_gpu.py``); their
sm_90 compile is checked in ``test_gluon_compile.py``."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import forge_mcore as fm
from forge_mcore.kernels import gluon_wgrad
from forge_mcore.kernels.configs import CANDIDATES, TileConfig

GLUON = TileConfig(64, 128, 64, 8, 4, 2, split_n=2, kernel="gluon")
WS = TileConfig(64, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_ws")
BF16 = torch.empty(1, dtype=torch.bfloat16)


def _state(codec="bf16", store="bf16", rule="adamw"):
    dtype = torch.float32 if store == "fp32" else torch.bfloat16
    return fm.ForgeParamState.create(torch.zeros(64, 128, dtype=dtype), rule, {}, codec, store)


@pytest.mark.parametrize("config", [GLUON, WS], ids=["gluon", "gluon_ws"])
def test_applies_to_a_plain_step_with_every_operand_on_tma(config):
    assert gluon_wgrad.applies(config, _state(), BF16, None, True, True)
    assert gluon_wgrad.applies(config, _state(rule="sgd"), BF16, None, True, True)  # one state


@pytest.mark.parametrize("why, args", [
    ("the Triton kernel's config", (dataclasses.replace(GLUON, kernel="triton"), _state(), BF16, None, True, True)),
    ("accumulate mode", (GLUON, None, BF16, None, True, True)),
    ("an earlier micro-batch's partial gradient", (GLUON, _state(), BF16, torch.zeros(1), True, True)),
    ("pointer slabs", (GLUON, _state(), BF16, None, False, True)),
    ("pointer tiles", (GLUON, _state(), BF16, None, True, False)),
    ("fp32 operands", (GLUON, _state(store="fp32"), torch.empty(1), None, True, True)),
    ("int8 states", (GLUON, _state(codec="int8"), BF16, None, True, True)),
    ("fp8 states", (GLUON, _state(codec="fp8"), BF16, None, True, True)),
    ("an fp32 master", (GLUON, _state(codec="fp32", store="fp32_master"), BF16, None, True, True)),
    ("stochastic rounding", (GLUON, _state(store="bf16_sr"), BF16, None, True, True)),
    # 4 slabs of 24 KB + 2 tile buffers of 64x128 x (bf16 weight + 2 fp32 moments) = 256 KB
    ("fp32 moments beside two tile buffers", (WS, _state(codec="fp32"), BF16, None, True, True)),
])
def test_everything_else_takes_the_triton_kernel(why, args):
    assert not gluon_wgrad.applies(*args), why


def test_fp32_moments_fit_beside_one_tile_buffer():
    assert gluon_wgrad.applies(GLUON, _state(codec="fp32"), BF16, None, True, True)


@pytest.mark.parametrize("bad", [
    dict(kernel="cuda"),
    dict(kernel="gluon", split_n=1, block_n=64),
    dict(kernel="gluon", prefetch=True),
    dict(kernel="gluon", maxnreg=128),
    dict(kernel="gluon", block_k=32),
    dict(kernel="gluon", epilogue_stages=2),
    dict(kernel="gluon_ws", maxnreg=128),
    dict(kernel="gluon_ws", num_warps=4, epilogue_stages=2),  # two consumer warpgroups
    dict(kernel="gluon_ws", num_warps=8, epilogue_stages=3),  # a tile buffer each
])
def test_configs_the_gluon_kernels_cannot_run_are_refused(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(GLUON, **bad)



def test_every_gluon_candidate_fits_shared_memory_with_bf16_states():
    for config in [c for c in CANDIDATES if c.kernel != "triton"]:
        assert gluon_wgrad.applies(config, _state(), BF16, None, True, True), config
