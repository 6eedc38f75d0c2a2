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
