"""Unscaled state codecs: fp32 and bf16 (round to nearest even)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ..kernels.tile_io import load_tile, store_tile
from ..kernels.tl_bits import bf16_to_f32, f32_to_bf16_rne
from .base import EncodedState, StateCodec, register


@triton.jit
def fp32_load(src, scale_ptr, om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr, NONNEG: tl.constexpr,
              USE_TMA: tl.constexpr):
    return load_tile(src, om, on, M, N, BM, BN, USE_TMA)


@triton.jit
def fp32_store(dst, scale_ptr, om, on, M, N, NB, x, NONNEG: tl.constexpr, USE_TMA: tl.constexpr):
    store_tile(dst, om, on, M, N, x, USE_TMA)


@triton.jit
def bf16_load(src, scale_ptr, om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr, NONNEG: tl.constexpr,
              USE_TMA: tl.constexpr):
    return bf16_to_f32(load_tile(src, om, on, M, N, BM, BN, USE_TMA))


@triton.jit
def bf16_store(dst, scale_ptr, om, on, M, N, NB, x, NONNEG: tl.constexpr, USE_TMA: tl.constexpr):
    store_tile(dst, om, on, M, N, f32_to_bf16_rne(x), USE_TMA)


class _PlainCodec(StateCodec):
    dtype: torch.dtype

    def zeros(self, shape: tuple[int, int], device: torch.device, nonnegative: bool, init: float = 0.0) -> EncodedState:
        return EncodedState(torch.full(shape, init, dtype=self.dtype, device=device), None, nonnegative, shape[1])

    def decode(self, enc: EncodedState) -> torch.Tensor:
        return enc.data.to(torch.float32, copy=True)

    def encode_(self, enc: EncodedState, x: torch.Tensor) -> None:
        enc.data.copy_(x)


@register
class FP32Codec(_PlainCodec):
    name = "fp32"
    dtype = torch.float32
    relative_error = 0.0
    triton_load = fp32_load
    triton_store = fp32_store


@register
class BF16Codec(_PlainCodec):
    name = "bf16"
    dtype = torch.bfloat16
    relative_error = 2.0**-8  # half an ulp of an 8-bit significand
    triton_load = bf16_load
    triton_store = bf16_store
