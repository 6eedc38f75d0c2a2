"""Weight stores: how the fused step reads and writes the weight itself.

``fp32``         the weight is fp32 and updated in place.
``bf16``         the weight is bf16, the fp32 result rounded to nearest even.
``bf16_sr``      the weight is bf16, the fp32 result rounded stochastically
                 (unbiased, so updates smaller than half an ulp still move the
                 weight on average; paper App. N, SR-store recipe).
``fp32_master``  the bf16 weight is only the compute copy: the epilogue reads and
                 updates an fp32 master and writes both in one pass (paper App. K).

Each store is a ``@triton.jit`` load/store pair plus its torch twin. The
stochastic store's random bits (``tl.randint``) cannot be reproduced in torch;
its twin draws its own and is checked statistically.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import triton
import triton.language as tl

from ..kernels.tile_io import load_tile, store_tile, tile_index
from ..kernels.tl_bits import bf16_to_f32, f32_to_bf16_rne, f32_to_bf16_stochastic
from ..registry import Registry


@triton.jit
def fp32_weight_load(w, master, om, on, M, N, BM: tl.constexpr, BN: tl.constexpr, USE_TMA: tl.constexpr):
    return load_tile(w, om, on, M, N, BM, BN, USE_TMA)


@triton.jit
def fp32_weight_store(w, master, om, on, M, N, x, seed, USE_TMA: tl.constexpr):
    store_tile(w, om, on, M, N, x, USE_TMA)


@triton.jit
def bf16_weight_load(w, master, om, on, M, N, BM: tl.constexpr, BN: tl.constexpr, USE_TMA: tl.constexpr):
    return bf16_to_f32(load_tile(w, om, on, M, N, BM, BN, USE_TMA))


@triton.jit
def bf16_weight_store(w, master, om, on, M, N, x, seed, USE_TMA: tl.constexpr):
    store_tile(w, om, on, M, N, f32_to_bf16_rne(x), USE_TMA)


@triton.jit
def bf16_sr_weight_store(w, master, om, on, M, N, x, seed, USE_TMA: tl.constexpr):
    # The element's global offset seeds its random bits: independent per element and step.
    offs, _ = tile_index(om, on, M, N, x.shape[0], x.shape[1])
    store_tile(w, om, on, M, N, f32_to_bf16_stochastic(x, seed, offs.to(tl.uint32)), USE_TMA)


@triton.jit
def master_weight_load(w, master, om, on, M, N, BM: tl.constexpr, BN: tl.constexpr, USE_TMA: tl.constexpr):
    return load_tile(master, om, on, M, N, BM, BN, USE_TMA)


@triton.jit
def master_weight_store(w, master, om, on, M, N, x, seed, USE_TMA: tl.constexpr):
    store_tile(master, om, on, M, N, x, USE_TMA)
    store_tile(w, om, on, M, N, f32_to_bf16_rne(x), USE_TMA)


class WeightStore:
    name: ClassVar[str]
    weight_dtype: ClassVar[torch.dtype]
    has_master: ClassVar[bool] = False
    stochastic: ClassVar[bool] = False
    triton_load: ClassVar[Any]
    triton_store: ClassVar[Any]

    def load(self, weight: torch.Tensor, master: torch.Tensor | None) -> torch.Tensor:
        """A fresh fp32 copy of the value the rule updates."""
        return (master if self.has_master else weight).to(torch.float32, copy=True)

    def store_(self, weight: torch.Tensor, master: torch.Tensor | None, w: torch.Tensor,
               generator: torch.Generator | None = None) -> None:
        weight.copy_(w)  # copy_ to bf16 rounds to nearest even


_STORES: Registry[WeightStore] = Registry(WeightStore, "weight_store")


@_STORES.register
class FP32Store(WeightStore):
    name, weight_dtype = "fp32", torch.float32
    triton_load, triton_store = fp32_weight_load, fp32_weight_store


@_STORES.register
class BF16Store(WeightStore):
    name, weight_dtype = "bf16", torch.bfloat16
    triton_load, triton_store = bf16_weight_load, bf16_weight_store


@_STORES.register
class BF16StochasticStore(WeightStore):
    name, weight_dtype, stochastic = "bf16_sr", torch.bfloat16, True
    triton_load, triton_store = bf16_weight_load, bf16_sr_weight_store

    def store_(self, weight: torch.Tensor, master: torch.Tensor | None, w: torch.Tensor,
               generator: torch.Generator | None = None) -> None:
        weight.copy_(stochastic_round_bf16(w, generator))


@_STORES.register
class FP32MasterStore(WeightStore):
    name, weight_dtype, has_master = "fp32_master", torch.bfloat16, True
    triton_load, triton_store = master_weight_load, master_weight_store

    def store_(self, weight: torch.Tensor, master: torch.Tensor | None, w: torch.Tensor,
               generator: torch.Generator | None = None) -> None:
        master.copy_(w)
        weight.copy_(w)


def stochastic_round_bf16(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Torch twin of ``f32_to_bf16_stochastic``: add 16 random low bits, truncate."""
    bits = x.float().contiguous().view(torch.int32)
    noise = torch.randint(0, 1 << 16, bits.shape, dtype=torch.int32, device=x.device, generator=generator)
    return ((bits + noise) & -65536).view(torch.float32).to(torch.bfloat16)


def get_weight_store(name: str | WeightStore) -> WeightStore:
    """The weight store called ``name`` (``fp32``, ``bf16``, ``bf16_sr``, ``fp32_master``), or ``name`` itself."""
    return _STORES.get(name)


def available_weight_stores() -> list[str]:
    return _STORES.names()


def default_weight_store(weight: torch.Tensor) -> str:
    """The store a weight of this dtype gets unless told otherwise."""
    if weight.dtype == torch.float32:
        return "fp32"
    if weight.dtype == torch.bfloat16:
        return "bf16"
    raise TypeError(
        f"weight dtype {weight.dtype} is not supported: use float32 or bfloat16 weights "
        "(fp16 needs a loss scaler whose skipped steps a fused update cannot honour; train in bf16)"
    )
