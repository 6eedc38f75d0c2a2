"""Tile loads and stores that work on a TMA descriptor or on a plain pointer.

On Hopper the fused kernel reads and writes its dY/X slabs and its weight and
state tiles through tensor descriptors: the copy engine moves whole tiles, so
no thread holds per-element addresses (what made the epilogue spill registers)
and global accesses are perfectly coalesced whatever register layout the
matrix-multiply accumulator has. Tensors whose rows are not 16-byte aligned
take the pointer path (masked loads and stores), chosen per launch by the
``USE_TMA`` constexpr.
"""

import triton
import triton.language as tl

from .tl_bits import INTERPRETING


@triton.jit
def tile_index(om, on, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Row-major element offsets and the in-bounds mask of the tile at (om, on)."""
    rm = om + tl.arange(0, BM)
    rn = on + tl.arange(0, BN)
    return rm.to(tl.int64)[:, None] * N + rn[None, :], (rm[:, None] < M) & (rn[None, :] < N)


@triton.jit
def load_tile(src, om, on, M, N, BM: tl.constexpr, BN: tl.constexpr, USE_TMA: tl.constexpr):
    """The BM x BN tile at (om, on) of a row-major M x N tensor; out of bounds reads 0."""
    if USE_TMA:
        tile = src.load([om, on])
    else:
        offs, mask = tile_index(om, on, M, N, BM, BN)
        tile = tl.load(src + offs, mask=mask, other=tl.zeros((BM, BN), dtype=src.dtype.element_ty))
    return tile


@triton.jit
def store_tile(dst, om, on, M, N, x, USE_TMA: tl.constexpr):
    """Store tile ``x`` at (om, on); out-of-bounds elements are dropped."""
    if USE_TMA:
        dst.store([om, on], x)
    else:
        offs, mask = tile_index(om, on, M, N, x.shape[0], x.shape[1])
        tl.store(dst + offs, x, mask=mask)


@triton.jit
def prefetch_tile_l2(src, om, on, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Ask L2 for every 128-byte line of the BM x BN tile at (om, on) of a row-major
    M x N tensor (``prefetch.global.L2``; no registers, nothing waits on it). Issued
    before the main loop, the epilogue's tile loads then hit L2. A no-op when interpreting."""
    if not INTERPRETING:
        LINE: tl.constexpr = 1024 // src.dtype.element_ty.primitive_bitwidth  # elements per 128-byte line
        CHUNKS: tl.constexpr = BN // LINE if BN >= LINE else 1
        rm = om + tl.arange(0, BM)
        rn = on + tl.arange(0, CHUNKS) * LINE
        ok = ((rm[:, None] < M) & (rn[None, :] < N)).to(tl.int32)
        tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.u32 $0, 0; }", "=r,l,r",
            [src + rm.to(tl.int64)[:, None] * N + rn[None, :], ok], dtype=tl.int32, is_pure=False, pack=1,
        )
