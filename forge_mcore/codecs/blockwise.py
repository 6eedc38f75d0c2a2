"""Block-scaled state codecs: int8 and fp8 (e4m3), 64-wide blocks along rows.

Each row of a state is cut into 64-wide blocks along its contiguous dimension;
each block stores one fp32 scale (its absmax over the code range) and one code
per element. The last block of a row may be partial (any ``in_features`` is
accepted); its missing columns count as zeros.

int8, signed states (first moments, momentum): symmetric ``int8`` codes,
``scale = absmax / 127``, ``code = round(x / scale)``, half to even (in the kernel one
fma, rounding to nearest onto 1.5 x 2^23).

int8, nonnegative states (second moments, Adagrad sums): the square root is
coded instead, as ``uint8`` with ``scale = absmax(sqrt v) / 255`` and
``code = max(round(sqrt(v) / scale), 1)``. Uniform codes on ``sqrt v`` span twice
the dynamic range of codes on ``v`` itself, and every entry of a block keeps at
least one code step: ``v`` is floored away from zero (paper App. B), since a
second moment quantized to zero would blow up ``1/sqrt(v)`` for about
``1/(1-beta2)`` steps. The floor holds for the block's zeros too (they decode as
``scale**2``): such an entry has seen only zero gradients, so its first moment
and its update are zero whatever its second moment, and the floor costs the
kernel no per-element test of ``v > 0``. An all-zero (flushed) block stays zero.

fp8: ``float8_e4m3fn`` codes with ``scale = absmax / 448``; positive entries of a
nonnegative state are floored to the smallest e4m3 subnormal (2^-9 of a step).

Storage: both store whole blocks, ``M x 64*NB`` codes for an ``M x N`` state (the
missing columns of a partial last block hold what encoding zeros gives). int8 codes are
stored in *fragment order* within each block: position ``16a + 2j + e`` holds column
``8j + 2a + e`` (a < 4, j < 8, e < 2). A Hopper wgmma accumulator gives a thread the
columns ``8j + 2a + e`` of its rows, so in this order the 16 codes a thread decodes and
encodes in a row are contiguous: one 16-byte shared-memory access where the logical
order takes eight 2-byte ones (``gluon_wgrad``). Every reader of the codes goes through
this module (the torch twin, the Triton kernel's loads and stores), and a checkpoint
holds the codes as stored.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from ..kernels.tile_io import load_tile, store_tile, tile_index
from ..kernels.tl_bits import (
    INTERPRETING,
    code_biased_f32,
    div_exact,
    div_exact_by_constant,
    div_exact_constant_by,
    low_bytes,
    rounded_low_byte,
    sqrt,
)
from .base import EncodedState, StateCodec, register

BLOCK = 64
FP8_MAX = 448.0
FP8_MIN_SUBNORMAL = 2.0**-9
# Blocks whose absmax is below this are coded as zeros: qmax / absmax would overflow
# fp32 below ~4e-37 (a momentum decaying over zero gradients gets there), turning
# the block's zeros into NaN codes. Nothing an optimizer state holds is that small
# and still matters. (2^-118 ~ 3.3e-36 keeps 448 / absmax finite too.)
FLUSH_BELOW = 2.0**-118
_FLUSH_BELOW_TL: tl.constexpr = tl.constexpr(FLUSH_BELOW)  # the same, for the jit functions


@triton.jit
def _row_scales(om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr):
    # The kernel hands the codec sub-tiles exactly one 64-wide block wide
    # (configs.TileConfig enforces it), so a block is a row of the sub-tile:
    # one scale per row, its absmax a row reduction -- no gathers, no reshapes.
    tl.static_assert(BN == 64, "block-scaled codecs need 64-wide sub-tiles")
    # (A sub-tile may lie wholly past the last column: the right half of a last tile.)
    rm = om + tl.arange(0, BM)
    return rm.to(tl.int64) * NB + on // 64, (rm < M) & (on < N)


@triton.jit
def _zero_outside(x, om, on, M, N):
    # Elements past the tensor's edge must not raise their block's absmax.
    _, mask = tile_index(om, on, M, N, x.shape[0], x.shape[1])
    return tl.where(mask, x, 0.0)


@triton.jit
def _load_codes(src, scale_ptr, om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr, USE_TMA: tl.constexpr):
    """(codes as stored, row scales) of a sub-tile (the codes are 64 * NB columns wide)."""
    soffs, smask = _row_scales(om, on, M, N, NB, BM, BN)
    return load_tile(src, om, on, M, NB * 64, BM, BN, USE_TMA), tl.load(scale_ptr + soffs, mask=smask, other=0.0)


@triton.jit
def fragment_to_logical(stored):
    """A 64-column block of int8 codes as stored (fragment order, see the module docstring) in
    column order: position 16a + 2j + e is column 8j + 2a + e. Only a relabelling: compiled for a
    layout that gives each thread 16 contiguous positions of a row, no data moves."""
    ROWS: tl.constexpr = stored.shape[0]
    tl.static_assert(stored.shape[1] == 64, "int8 codes are ordered within 64-column blocks")
    return stored.reshape([ROWS, 4, 8, 2]).permute((0, 2, 1, 3)).reshape([ROWS, 64])


@triton.jit
def logical_to_fragment(codes):
    """The inverse of ``fragment_to_logical``: a 64-column block of codes in the order stored."""
    ROWS: tl.constexpr = codes.shape[0]
    tl.static_assert(codes.shape[1] == 64, "int8 codes are ordered within 64-column blocks")
    return codes.reshape([ROWS, 8, 4, 2]).permute((0, 2, 1, 3)).reshape([ROWS, 64])


@triton.jit
def _store_scales(scale_ptr, om, on, M, N, NB, scales, BM: tl.constexpr, BN: tl.constexpr):
    soffs, smask = _row_scales(om, on, M, N, NB, BM, BN)
    tl.store(scale_ptr + soffs, scales, mask=smask)


# The codecs' arithmetic on a tile already in registers (one 64-wide block per row, its scale
# per row), apart from how the tile and its scales are read and written: the Triton kernel
# and the Gluon kernel share it.

@triton.jit
def int8_decode_biased(biased, row_scales, NONNEG: tl.constexpr):
    """The fp32 state of int8 codes given as ``code_biased_f32`` of them (uint8 codes for NONNEG
    states, coding sqrt), one scale per row."""
    if NONNEG and not INTERPRETING:
        # (2^23 + c) s - 2^23 s is c s exactly before the fma's one rounding (2^23 s is exact): the
        # subtraction of 2^23 folds into the multiply. (Not for int8's 2^23 + 128: not exact.)
        x = tl.fma(biased, row_scales[:, None], (row_scales * -8388608.0)[:, None])
    else:
        x = (biased - (8388608.0 if NONNEG else 8388736.0)) * row_scales[:, None]
    if NONNEG:
        x = x * x
    return x


@triton.jit
def int8_decode(codes, row_scales, NONNEG: tl.constexpr):
    return int8_decode_biased(code_biased_f32(codes), row_scales, NONNEG)


@triton.jit
def int8_encode(x, inside, NONNEG: tl.constexpr, MASK_EDGES: tl.constexpr = True, FAST_DIVISION: tl.constexpr = False):
    """(codes, row scales) of tile ``x``, each code the low byte of an int32 (``low_bytes(codes,
    NONNEG)`` narrows them, four to a register once reordered as stored); ``inside``: where the
    tile lies within the tensor (elements past its edge must not raise their block's absmax).
    MASK_EDGES=False: the caller knows they are zero already (``Rule.zero_stays_zero``), and
    ``inside`` is not read.
    FAST_DIVISION: the per-row divisions by div_rn's fast path (``tl_bits``; the same bits)."""
    if NONNEG:
        qmax: tl.constexpr = 255.0
        x = sqrt(x)  # v >= 0 (a nonnegative state): the very sqrt the rule took, so the compiler shares it
    else:
        qmax: tl.constexpr = 127.0
    if MASK_EDGES:
        x = tl.where(inside, x, 0.0)
    absmax = tl.max(tl.abs(x), axis=1)
    # (scalars are splat by the divisions themselves: zeros_like has no layout to give under Gluon)
    if FAST_DIVISION:  # (an infinite absmax gives 0, as div_rn's qmax / inf: the fast path is undefined there)
        inv = tl.where((absmax > _FLUSH_BELOW_TL) & (absmax < float("inf")), div_exact_constant_by(qmax, absmax), 0.0)
    else:
        inv = tl.where(absmax > _FLUSH_BELOW_TL, div_exact(qmax, absmax), 0.0)
    if FAST_DIVISION:
        scales = div_exact_by_constant(absmax, qmax)
    else:
        scales = div_exact(absmax, qmax)
    # |x| <= absmax and inv = qmax / absmax correctly rounded, so |x * inv| <= qmax (1 + 2^-23)
    # and the code, rounded half to even by one fma, lies in [-qmax, qmax]: no clamp is needed.
    if NONNEG:
        # every code of a block that is not flushed is at least 1: x lifted to 3/4 of a step rounds
        # to one step (scales * inv is 1 within two ulps), and a flushed block's inv is 0
        x = tl.maximum(x, (scales * 0.75)[:, None])
    return rounded_low_byte(x, inv[:, None]), scales



@triton.jit
def int8_load(src, scale_ptr, om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr, NONNEG: tl.constexpr,
              USE_TMA: tl.constexpr):
    codes, row_scales = _load_codes(src, scale_ptr, om, on, M, N, NB, BM, BN, USE_TMA)
    return int8_decode(fragment_to_logical(codes), row_scales, NONNEG)


@triton.jit
def int8_store(dst, scale_ptr, om, on, M, N, NB, x, NONNEG: tl.constexpr, USE_TMA: tl.constexpr):
    _, inside = tile_index(om, on, M, N, x.shape[0], x.shape[1])
    codes, scales = int8_encode(x, inside, NONNEG)
    store_tile(dst, om, on, M, NB * 64, low_bytes(logical_to_fragment(codes), NONNEG), USE_TMA)
    _store_scales(scale_ptr, om, on, M, N, NB, scales, x.shape[0], x.shape[1])


@triton.jit
def fp8_load(src, scale_ptr, om, on, M, N, NB, BM: tl.constexpr, BN: tl.constexpr, NONNEG: tl.constexpr,
             USE_TMA: tl.constexpr):
    codes, row_scales = _load_codes(src, scale_ptr, om, on, M, N, NB, BM, BN, USE_TMA)
    return codes.to(tl.float32) * row_scales[:, None]


@triton.jit
def fp8_store(dst, scale_ptr, om, on, M, N, NB, x, NONNEG: tl.constexpr, USE_TMA: tl.constexpr):
    x = _zero_outside(x, om, on, M, N)
    absmax = tl.max(tl.abs(x), axis=1)
    inv = tl.where(absmax > _FLUSH_BELOW_TL, div_exact(448.0 + tl.zeros_like(absmax), absmax), 0.0)
    q = tl.minimum(tl.maximum(x * inv[:, None], -448.0), 448.0)
    if NONNEG:
        q = tl.where(x > 0, tl.maximum(q, 0.001953125), 0.0)  # 2^-9, the smallest e4m3 subnormal
    store_tile(dst, om, on, M, NB * 64, q.to(tl.float8e4nv, fp_downcast_rounding="rtne"), USE_TMA)
    _store_scales(scale_ptr, om, on, M, N, NB, div_exact(absmax, 448.0 + tl.zeros_like(absmax)), x.shape[0],
                  x.shape[1])


def _blocks(x: torch.Tensor) -> torch.Tensor:
    """(M, N) -> (M, NB, 64), the partial last block zero-padded."""
    n = x.shape[1]
    pad = -n % BLOCK
    return F.pad(x, (0, pad)).view(x.shape[0], -1, BLOCK)


class _BlockCodec(StateCodec):
    block = BLOCK

    def _code_dtype(self, nonnegative: bool) -> torch.dtype:
        raise NotImplementedError

    def _stored(self, codes: torch.Tensor) -> torch.Tensor:
        """(M, NB, 64) codes in column order -> (M, 64 * NB) as stored (here the same order)."""
        return codes.reshape(codes.shape[0], -1)

    def _in_column_order(self, data: torch.Tensor) -> torch.Tensor:
        """The inverse of ``_stored``: (M, 64 * NB) as stored -> (M, NB, 64) in column order."""
        return data.reshape(data.shape[0], -1, BLOCK)

    def _padding_codes(self, scale: torch.Tensor, nonnegative: bool) -> torch.Tensor:
        """(M, NB) fp32: the code of a zero in each block, as encoding writes a partial block's missing columns."""
        return torch.zeros_like(scale)

    def codes_from_version_1(self, codes: torch.Tensor, scale: torch.Tensor, nonnegative: bool) -> torch.Tensor:
        """Codes saved in ``base.CODES_VERSION`` 1's layout (M x N, column order) as stored now (plain
        codecs' layout did not change)."""
        blocks = _blocks(codes.float())  # (every code is exact in fp32)
        pad = torch.arange(blocks.shape[1] * BLOCK, device=codes.device).view(1, -1, BLOCK) >= codes.shape[1]
        blocks = torch.where(pad, self._padding_codes(scale, nonnegative)[..., None], blocks)
        return self._stored(blocks.to(codes.dtype))

    def zeros(self, shape: tuple[int, int], device: torch.device, nonnegative: bool, init: float = 0.0) -> EncodedState:
        enc = EncodedState(
            torch.zeros(shape[0], self.stored_columns(shape[1]), dtype=self._code_dtype(nonnegative), device=device),
            torch.zeros(shape[0], self.scale_blocks(shape[1]), dtype=torch.float32, device=device),
            nonnegative,
            shape[1],
        )
        if init != 0.0:
            self.encode_(enc, torch.full(shape, init, dtype=torch.float32, device=device))
        return enc

    def codes(self, enc: EncodedState) -> torch.Tensor:
        """The codes of ``enc`` in column order, whole blocks: (M, 64 * NB), the state's N first."""
        return self._in_column_order(enc.data).reshape(enc.data.shape[0], -1)

    def decode(self, enc: EncodedState) -> torch.Tensor:
        x = self._in_column_order(enc.data).float() * enc.scale[..., None]
        return x.reshape(x.shape[0], -1)[:, : enc.columns]

    def _store_codes(self, enc: EncodedState, q: torch.Tensor, scales: torch.Tensor) -> None:
        """Write (M, NB, 64) fp32 codes ``q`` (in column order, whole blocks) and their scales."""
        enc.data.copy_(self._stored(q.to(enc.data.dtype)))
        enc.scale.copy_(scales)


@register
class Int8Codec(_BlockCodec):
    name = "int8"
    # Half a code step of the block's absmax: 1/254 signed; on v, about 1/255 of
    # the block's absmax (sqrt coding: |dv| <= (2 sqrt(v) + s/2) s/2, s = sqrt(absmax)/255).
    relative_error = 1.0 / 254.0
    triton_load = int8_load
    triton_store = int8_store

    def _code_dtype(self, nonnegative):
        return torch.uint8 if nonnegative else torch.int8

    def _stored(self, codes):  # fragment order: position 16a + 2j + e holds column 8j + 2a + e
        return codes.reshape(*codes.shape[:2], 8, 4, 2).transpose(2, 3).reshape(codes.shape[0], -1)

    def _in_column_order(self, data):
        return data.reshape(data.shape[0], -1, 4, 8, 2).transpose(2, 3).reshape(data.shape[0], -1, BLOCK)

    def _padding_codes(self, scale, nonnegative):  # sqrt v: one step in a block that is not flushed
        return (scale > 0).float() if nonnegative else torch.zeros_like(scale)

    def decode(self, enc: EncodedState) -> torch.Tensor:
        x = super().decode(enc)
        return x * x if enc.nonnegative else x

    def encode_(self, enc: EncodedState, x: torch.Tensor) -> None:
        qmax = 255.0 if enc.nonnegative else 127.0
        u = x.float().clamp(min=0).sqrt() if enc.nonnegative else x.float()
        blocks = _blocks(u)
        absmax = blocks.abs().amax(dim=-1)
        # torch.full_like(...) / absmax, not qmax / absmax: a Python scalar over a
        # tensor is computed as qmax * reciprocal(absmax), one rounding more than Triton's div_rn.
        inv = torch.where(absmax > FLUSH_BELOW, torch.full_like(absmax, qmax) / absmax, torch.zeros_like(absmax))
        q = torch.round(blocks * inv[..., None])  # (half to even)
        if enc.nonnegative:  # at least one step in any block not flushed (inv 0), its zeros included
            q = torch.where(inv[..., None] > 0, q.clamp(1.0, 255.0), torch.zeros_like(q))
        else:
            q = q.clamp(-127.0, 127.0)
        self._store_codes(enc, q, absmax / qmax)


@register
class FP8Codec(_BlockCodec):
    name = "fp8"
    relative_error = 2.0**-4  # half an ulp of a 3-bit significand, at the block's absmax
    triton_load = fp8_load
    triton_store = fp8_store

    def _code_dtype(self, nonnegative):
        return torch.float8_e4m3fn

    def encode_(self, enc: EncodedState, x: torch.Tensor) -> None:
        blocks = _blocks(x.float())
        absmax = blocks.abs().amax(dim=-1)
        inv = torch.where(absmax > FLUSH_BELOW, torch.full_like(absmax, FP8_MAX) / absmax, torch.zeros_like(absmax))
        q = (blocks * inv[..., None]).clamp(-FP8_MAX, FP8_MAX)
        if enc.nonnegative:
            q = torch.where(blocks > 0, q.clamp(min=FP8_MIN_SUBNORMAL), torch.zeros_like(q))
        self._store_codes(enc, q, absmax / FP8_MAX)
