"""The fused step on Hopper, written in Gluon: a persistent, warp-specialized kernel.

The Triton kernel (``fused_wgrad.py``) runs each tile's main loop and its epilogue one
after the other, and Triton 3.6 waits for each epilogue TMA load right where it is issued,
so a tile's weight and state bytes start to move only once its GEMM is done
(``docs/kernel.md``). Here the step is written against the hardware's own primitives
(``triton.experimental.gluon``: TMA copies, mbarriers, asynchronous wgmma, warp
specialization) in CUTLASS's ping-pong schedule (section below): producer warps issue every
slab and weight/state load ahead and the weight/state stores, and two consumer warpgroups take
turns, one running its tile's rule while the other runs its GEMM.

The rules are the same ``@triton.jit`` epilogues the Triton kernel uses (Gluon calls
them as they are); the guard and telemetry are the Triton kernel's (one sum of g^2 per
tile, a non-finite tile leaves its weight and state bit-identical).

Scope: the fused step (no accumulation modes), weights stored as bf16 or fp32 and
plain (bf16 or fp32) states, every operand 16-byte aligned for TMA. ``ops`` routes
what falls outside to the Triton kernel, which also remains the reference
(interpreter tests) and the path on every other device. History (a non-persistent
Gluon kernel, one consumer): ``docs/perf_log.md`` rows 9, 12, 13.
"""

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from ..codecs.blockwise import fragment_to_logical, int8_decode_biased, int8_encode, logical_to_fragment
from ..rules.base import load_hyper
from .configs import GLUON_KERNELS, TileConfig
from .fused_wgrad import TELEMETRY_SEM, _tile_ids
from .launch import BoundLaunch, DirectLauncher
from .tl_bits import bf16_to_f32, code_biased_f32, low_bytes

if TYPE_CHECKING:  # (param_state imports the kernels)
    from ..param_state import ForgeParamState

# Gluon ops that later Tritons renamed (3.6's names; 3.7 renamed the barrier, 3.9 the TMA copies
# and dropped the old names): the kernel runs on each.
_cta_barrier = getattr(gl, "thread_barrier", None) or gl.barrier
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
_PUBLIC_REINTERPRET = gl.constexpr(hasattr(gl.shared_memory_descriptor, "reinterpret"))  # 3.9: no underscore


@triton.constexpr_function
def _mma_layout(block_m, half, num_warps):
    """The wgmma accumulator layout of a ``block_m x half`` tile over ``num_warps`` warps."""
    warps = [4, 1]
    while warps[0] * warps[1] != num_warps:
        if block_m > 16 * warps[0]:
            warps[0] *= 2
        else:
            warps[1] *= 2
    n = 256
    while n > max(half // warps[1], 8) or half % n:
        n -= 8
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=warps, instr_shape=[16, n, 16])


@triton.constexpr_function
def _fragment_layout(mma_layout):
    """Registers of a column half of int8 codes as stored (fragment order, ``codecs/blockwise.py``),
    for the rule's wgmma layout of 64 x 64 over four warps: each thread holds 16 contiguous codes
    of each of its two rows (one 16-byte shared-memory access per row), and
    ``fragment_to_logical`` of them puts every code in the register the wgmma layout has it in
    (the conversion only renames registers; ``scripts/probe_fragment_codes.py``)."""
    if mma_layout != _mma_layout(64, 64, 4):
        raise ValueError(f"int8 codes in fragment order need the 64 x 64, four-warp wgmma layout, not {mma_layout}")
    return gl.DistributedLinearLayout(
        reg_bases=[[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], lane_bases=[[0, 16], [0, 32], [1, 0], [2, 0], [4, 0]],
        warp_bases=[[16, 0], [32, 0]], block_bases=[], shape=[64, 64])


@gluon.jit
def _widen(x):
    if x.dtype == gl.float32:
        return x
    else:
        return bf16_to_f32(x)


# Programmatic dependent launch (PDL): launched with it, the kernel may start while the stream's
# previous kernel still runs, as that kernel's programs call ``griddepcontrol.launch_dependents``
# or exit. Every partition waits (``griddepcontrol.wait``: the previous grid complete, its
# writes visible) before its first global access, so what overlaps is the launch and the
# prologue, never data: back to back, the next step's programs take the SMs this one's free
# early and are past their launch when its last SM ends. Each program lets the next kernel
# launch at once (it needs SMs, which only this grid's exits free). FORGE_PDL=0: launched
# without it (read once, at import).
PDL = os.environ.get("FORGE_PDL", "1") != "0"


@gluon.jit
def _after_prior_grids(PDL: gl.constexpr):
    """PDL: let the next kernel launch, then wait for the previous one (see ``PDL``)."""
    if PDL:
        gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // dummy $0", "=r", [], dtype=gl.int32,
                                  is_pure=False, pack=1)
        gl.inline_asm_elementwise("griddepcontrol.wait; // dummy $0", "=r", [], dtype=gl.int32, is_pure=False,
                                  pack=1)


@gluon.jit
def _allocate_tiles(tile_descs, COUNT: gl.constexpr, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr,
                    HAS_S2: gl.constexpr):
    """COUNT column-half buffers for the weight and each present state (an absent state's
    buffer is the weight's, never touched)."""
    w_desc, s0_desc, s1_desc, s2_desc = tile_descs
    w_buf = gl.allocate_shared_memory(w_desc.dtype, [COUNT] + w_desc.block_type.shape, w_desc.layout)
    s0_buf = w_buf
    s1_buf = w_buf
    s2_buf = w_buf
    if HAS_S0:
        s0_buf = gl.allocate_shared_memory(s0_desc.dtype, [COUNT] + s0_desc.block_type.shape, s0_desc.layout)
    if HAS_S1:
        s1_buf = gl.allocate_shared_memory(s1_desc.dtype, [COUNT] + s1_desc.block_type.shape, s1_desc.layout)
    if HAS_S2:
        s2_buf = gl.allocate_shared_memory(s2_desc.dtype, [COUNT] + s2_desc.block_type.shape, s2_desc.layout)
    return w_buf, s0_buf, s1_buf, s2_buf


@gluon.jit
def _fetch_tile(tile_descs, tile_bufs, base, om, on, bar, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr,
                HAS_S2: gl.constexpr, HALVES: gl.constexpr = 2):
    """TMA loads of the tile's weight and states: column halves into buffers base and base + 1
    (HALVES 1: the half at ``on`` into buffer ``base``)."""
    HALF: gl.constexpr = tile_descs[0].block_type.shape[1]
    for j in gl.static_range(4):
        if j == 0 or (j == 1 and HAS_S0) or (j == 2 and HAS_S1) or (j == 3 and HAS_S2):
            for h in gl.static_range(HALVES):
                _tma_load(tile_descs[j], [om, on + h * HALF], bar, tile_bufs[j].index(base + h))


@triton.constexpr_function
def _copy_layout(bits, half):
    """Registers of an 8 x ``half`` block of ``bits``-bit elements over one warp, 16 bytes (one
    cp.async) per thread and row segment."""
    vec = 128 // bits
    return gl.BlockedLayout([1, vec], [32 * vec // half, half // vec], [1, 1], [1, 0])


@gluon.jit
def _fill_lsu(ptr, stride, buf, base, om, on, M, N):
    """Column halves ``base`` and ``base + 1`` of ``buf`` from the rows at ``om`` (``stride``
    elements apart) of the tensor at ``ptr``, by cp.async, 8 rows per copy, zeros past its edge."""
    ROWS: gl.constexpr = buf.shape[1]
    HALF: gl.constexpr = buf.shape[2]
    layout: gl.constexpr = _copy_layout(buf.dtype.primitive_bitwidth, HALF)
    r = gl.arange(0, 8, layout=gl.SliceLayout(1, layout))
    for h in gl.static_range(2):
        cols = on + h * HALF + gl.arange(0, HALF, layout=gl.SliceLayout(0, layout))
        for b in gl.static_range(ROWS // 8):
            rows = om + b * 8 + r
            at = ptr + (rows.to(gl.int64)[:, None] * stride + cols[None, :])
            async_copy.async_copy_global_to_shared(buf.index(base + h).slice(b * 8, 8), at,
                                                   mask=(rows < M)[:, None] & (cols < N)[None, :])


@gluon.jit
def _fetch_tile_lsu(tile_ptrs, strides, tile_bufs, base, om, on, M, N, bar, HAS_S0: gl.constexpr,
                    HAS_S1: gl.constexpr, HAS_S2: gl.constexpr):
    """``_fetch_tile`` through the load/store unit (``TileConfig.tile_fill`` "lsu"): the tile producer
    warp's cp.async copies (``_fill_lsu``), so the SM's TMA engine carries only the slab ring. Each
    of the warp's threads arrives on ``bar`` once its own copies have landed (the barrier counts 32
    arrivals). strides: the weight's rows' and the states'."""
    _fill_lsu(tile_ptrs[0], strides[0], tile_bufs[0], base, om, on, M, N)
    if HAS_S0:
        _fill_lsu(tile_ptrs[1], strides[1], tile_bufs[1], base, om, on, M, N)
    if HAS_S1:
        _fill_lsu(tile_ptrs[2], strides[1], tile_bufs[2], base, om, on, M, N)
    if HAS_S2:
        _fill_lsu(tile_ptrs[3], strides[1], tile_bufs[3], base, om, on, M, N)
    async_copy.mbarrier_arrive(bar, increment_count=False)


@gluon.jit
def _store_tile(tile_descs, tile_bufs, base, om, on, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr,
                HAS_S2: gl.constexpr, HALVES: gl.constexpr = 2):
    """TMA stores of the tile's buffers (after a fence_async_shared); HALVES as ``_fetch_tile``'s."""
    HALF: gl.constexpr = tile_descs[0].block_type.shape[1]
    for j in gl.static_range(4):
        if j == 0 or (j == 1 and HAS_S0) or (j == 2 and HAS_S1) or (j == 3 and HAS_S2):
            for h in gl.static_range(HALVES):
                _tma_store(tile_descs[j], [om, on + h * HALF], tile_bufs[j].index(base + h))


@gluon.jit
def _row_scales(scales, om, on, M, NB, ROWS: gl.constexpr, layout: gl.constexpr, HAS_S0: gl.constexpr,
                HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, INT8: gl.constexpr):
    """The int8 states' scales of the ROWS rows at ``om`` in the 64-column block at ``on``, asked
    for before the consumer's main loop so their latency (an HBM sector per row) hides behind its
    GEMM instead of opening its rule. Zeros where a state is absent or not int8 (never read)."""
    rows = om + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    row_ok = rows < M
    at = rows.to(gl.int64) * NB + on // 64
    r0 = gl.full([ROWS], 0.0, gl.float32, layout=gl.SliceLayout(1, layout))
    r1 = r0
    r2 = r0
    if INT8 and HAS_S0:
        r0 = gl.load(scales[0] + at, mask=row_ok, other=0.0)
    if INT8 and HAS_S1:
        r1 = gl.load(scales[1] + at, mask=row_ok, other=0.0)
    if INT8 and HAS_S2:
        r2 = gl.load(scales[2] + at, mask=row_ok, other=0.0)
    return r0, r1, r2


@gluon.jit
def _load_state(buf, i, row_scales, layout: gl.constexpr, INT8: gl.constexpr, NONNEG: gl.constexpr):
    """A state's half tile in fp32: widened, or (int8) decoded with its rows' scales."""
    if INT8:
        # widened where each thread's codes are four to a register, then reordered (registers renamed)
        biased = code_biased_f32(buf.index(i).load(_fragment_layout(layout)))
        return int8_decode_biased(gl.convert_layout(fragment_to_logical(biased), layout), row_scales, NONNEG)
    else:
        return _widen(buf.index(i).load(layout))


@gluon.jit
def _store_state(buf, i, v, scale_ptr, rows, row_ok, on, N, NB, inside, INT8: gl.constexpr, MASK_EDGES: gl.constexpr,
                 FAST_DIVISION: gl.constexpr,
                 NONNEG: gl.constexpr):
    """A state's half tile back into its buffer: narrowed, or (int8) encoded, its rows' scales stored."""
    if INT8:
        codes, scales = int8_encode(v, inside, NONNEG, MASK_EDGES, FAST_DIVISION)
        codes = gl.convert_layout(logical_to_fragment(codes), _fragment_layout(v.type.layout))
        buf.index(i).store(low_bytes(codes, NONNEG))  # (uint8 for NONNEG states; four to a register)
        gl.store(scale_ptr + rows * NB + on // 64, scales, mask=row_ok & (on < N))
    else:
        buf.index(i).store(v.to(buf.dtype))


@gluon.jit
def _step_half(acc, i, om, on, tile_bufs, codec, hyper, grad_scale_ptr, UPDATE: gl.constexpr,
               VARIANT: gl.constexpr, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr, HAS_S2: gl.constexpr,
               HAS_GRAD_SCALE: gl.constexpr, INT8: gl.constexpr, MASK_EDGES: gl.constexpr, FAST_DIVISION: gl.constexpr,
               NONNEG_S0: gl.constexpr, NONNEG_S1: gl.constexpr, NONNEG_S2: gl.constexpr):
    """The rule on the column half at (om, on), read from and written back to its shared buffers.
    codec: (M, N, NB, the states' scale pointers, the half's row scales from ``_row_scales``);
    INT8, NONNEG_S*: the states' coding; hyper: the rule's per-step scalars (``load_hyper``)."""
    w_buf, s0_buf, s1_buf, s2_buf = tile_bufs
    M, N, NB, scales, row_scales = codec
    layout: gl.constexpr = acc.type.layout
    # where the half lies within the weight (an int8 block's absmax must not see past its edge)
    rows = om + gl.arange(0, acc.shape[0], layout=gl.SliceLayout(1, layout))
    cols = on + gl.arange(0, acc.shape[1], layout=gl.SliceLayout(0, layout))
    row_ok = rows < M
    inside = row_ok[:, None] & (cols < N)[None, :]
    rows = rows.to(gl.int64)
    g = acc
    if HAS_GRAD_SCALE:
        g = g * gl.load(grad_scale_ptr)
    w = _widen(w_buf.index(i).load(layout))
    v0 = g
    v1 = g
    v2 = g
    if HAS_S0:
        v0 = _load_state(s0_buf, i, row_scales[0], layout, INT8, NONNEG_S0)
    if HAS_S1:
        v1 = _load_state(s1_buf, i, row_scales[1], layout, INT8, NONNEG_S1)
    if HAS_S2:
        v2 = _load_state(s2_buf, i, row_scales[2], layout, INT8, NONNEG_S2)
    w, v0, v1, v2 = UPDATE(g, w, v0, v1, v2, hyper, VARIANT)
    w_buf.index(i).store(w.to(w_buf.dtype))
    if HAS_S0:
        _store_state(s0_buf, i, v0, scales[0], rows, row_ok, on, N, NB, inside, INT8, MASK_EDGES, FAST_DIVISION,
                     NONNEG_S0)
    if HAS_S1:
        _store_state(s1_buf, i, v1, scales[1], rows, row_ok, on, N, NB, inside, INT8, MASK_EDGES, FAST_DIVISION,
                     NONNEG_S1)
    if HAS_S2:
        _store_state(s2_buf, i, v2, scales[2], rows, row_ok, on, N, NB, inside, INT8, MASK_EDGES, FAST_DIVISION,
                     NONNEG_S2)


@gluon.jit
def _guard(acc_a, acc_b, sumsq_ptr, nonfinite_ptr):
    """Guard + telemetry, one sum of g^2 (of the unscaled gradient): whether the tile is finite;
    a finite tile adds its sum to the telemetry, a non-finite one counts itself. The adds are
    relaxed (``TELEMETRY_SEM``: ``fused_wgrad`` says why)."""
    # (a sum per half: each thread's squares then accumulate as one fma apiece, where the sum of
    # a_ij^2 + b_ij^2 takes a multiply, an fma and an add per pair)
    tile_sumsq = gl.sum(gl.sum(acc_a * acc_a, axis=1) + gl.sum(acc_b * acc_b, axis=1), axis=0)
    finite = tile_sumsq < float("inf")
    if finite:
        gl.atomic_add(sumsq_ptr, tile_sumsq, sem=TELEMETRY_SEM)
    else:
        gl.atomic_add(nonfinite_ptr, 1, sem=TELEMETRY_SEM)
    return finite


@gluon.jit
def _load_slab(dy_desc, x_desc, a_ring, b_ring, s, k, om, on, bar, ROW_BLOCKS: gl.constexpr, pred=True):
    """dY and X slab ``k`` into ring stage ``s``: dY as ROW_BLOCKS row blocks (one per consumer
    of a cooperative tile), X as two column halves."""
    BLOCK_K: gl.constexpr = dy_desc.block_type.shape[0]
    ROWS: gl.constexpr = dy_desc.block_type.shape[1]
    HALF: gl.constexpr = x_desc.block_type.shape[1]
    mbarrier.expect(bar, ROW_BLOCKS * dy_desc.block_type.nbytes + 2 * x_desc.block_type.nbytes, pred=pred)
    for r in gl.static_range(ROW_BLOCKS):
        _tma_load(dy_desc, [k * BLOCK_K, om + r * ROWS], bar, a_ring.index(ROW_BLOCKS * s + r), pred=pred)
    _tma_load(x_desc, [k * BLOCK_K, on], bar, b_ring.index(2 * s), pred=pred)
    _tma_load(x_desc, [k * BLOCK_K, on + HALF], bar, b_ring.index(2 * s + 1), pred=pred)


@gluon.jit
def _mma_step(a_ring, b_wide, a_slot, s, acc):
    """One wgmma of dY buffer ``a_slot`` against ring stage ``s``'s whole X slab (both column
    halves: one m64n128 instruction per k16 reads 6 KB of shared memory where two m64n64 read 8);
    returns once the previous step's has retired."""
    acc = warpgroup_mma(a_ring.index(a_slot).permute((1, 0)), b_wide.index(s), acc, is_async=True)
    return warpgroup_mma_wait(num_outstanding=1, deps=(acc,))


@gluon.jit
def _mma_step_tall(a_ring, b_wide, a_slot, s, acc_top, acc_bottom):
    """``_mma_step`` of a 128-row unit: dY buffers ``a_slot`` and ``a_slot + 1`` (the unit's rows 0-63
    into acc_top, 64-127 into acc_bottom) against ring stage ``s``'s X slab."""
    acc_top = warpgroup_mma(a_ring.index(a_slot).permute((1, 0)), b_wide.index(s), acc_top, is_async=True)
    acc_bottom = warpgroup_mma(a_ring.index(a_slot + 1).permute((1, 0)), b_wide.index(s), acc_bottom,
                               is_async=True)
    return warpgroup_mma_wait(num_outstanding=2, deps=(acc_top, acc_bottom))


@gluon.jit
def _column_halves(acc, layout: gl.constexpr):
    """A ROWS x 2*HALF accumulator as its two ROWS x HALF column halves in ``layout`` (each
    thread's registers already split by half: no data moves)."""
    ROWS: gl.constexpr = acc.shape[0]
    HALF: gl.constexpr = acc.shape[1] // 2
    left, right = acc.reshape([ROWS, 2, HALF]).permute((0, 2, 1)).split()
    return gl.convert_layout(left, layout), gl.convert_layout(right, layout)


@gluon.jit
def _rule_on_tile(acc_a, acc_b, base, om, on, tile_bufs, codec, row_scales_a, row_scales_b, hyper, grad_scale_ptr,
                  finite, tile_ring, UPDATE: gl.constexpr, VARIANT: gl.constexpr, HAS_S0: gl.constexpr,
                  HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, HAS_GRAD_SCALE: gl.constexpr, INT8: gl.constexpr,
                  MASK_EDGES: gl.constexpr, FAST_DIVISION: gl.constexpr, NONNEG_S0: gl.constexpr,
                  NONNEG_S1: gl.constexpr, NONNEG_S2: gl.constexpr, TILE_RING: gl.constexpr):
    """The rule on both column halves (``_rule_half``; ``finite``, ``tile_ring``: the tile ring's arguments)."""
    if INT8:
        # The int8 rule is long enough to stall on instruction fetch when inlined twice: the
        # halves as a runtime loop (one copy per consumer partition). 1.12-1.25x the speed at
        # BT <= 1024 (session 13); bf16 stays unrolled (the loop measured 0-3% slower there). The
        # second half's accumulator is moved in after the first (a loop-carried value): picking it
        # by a select kept both halves and the selected copy live, and the tall kernels, which hold
        # the other pass's accumulator too, spilled 96-104 B of it (16-24 B this way: 1.005x
        # median, 1.02x at 4096², session 30).
        acc = acc_a
        for h in range(2):
            first = h == 0
            row_scales = (gl.where(first, row_scales_a[0], row_scales_b[0]),
                          gl.where(first, row_scales_a[1], row_scales_b[1]),
                          gl.where(first, row_scales_a[2], row_scales_b[2]))
            _rule_half(acc, h, base, om, on, tile_bufs, codec, row_scales, hyper, grad_scale_ptr, finite, tile_ring,
                       UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES, FAST_DIVISION,
                       NONNEG_S0, NONNEG_S1, NONNEG_S2, TILE_RING)
            acc = acc_b
    else:
        _rule_half(acc_a, 0, base, om, on, tile_bufs, codec, row_scales_a, hyper, grad_scale_ptr, finite, tile_ring,
                   UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES, FAST_DIVISION,
                   NONNEG_S0, NONNEG_S1, NONNEG_S2, TILE_RING)
        _rule_half(acc_b, 1, base, om, on, tile_bufs, codec, row_scales_b, hyper, grad_scale_ptr, finite, tile_ring,
                   UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES, FAST_DIVISION,
                   NONNEG_S0, NONNEG_S1, NONNEG_S2, TILE_RING)


@gluon.jit
def _rule_half(acc, h, base, om, on, tile_bufs, codec, row_scales, hyper, grad_scale_ptr, finite, tile_ring,
               UPDATE: gl.constexpr, VARIANT: gl.constexpr, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr,
               HAS_S2: gl.constexpr, HAS_GRAD_SCALE: gl.constexpr, INT8: gl.constexpr, MASK_EDGES: gl.constexpr,
               FAST_DIVISION: gl.constexpr, NONNEG_S0: gl.constexpr, NONNEG_S1: gl.constexpr,
               NONNEG_S2: gl.constexpr, TILE_RING: gl.constexpr):
    """The rule on column half ``h`` of the unit at (om, on): in buffer ``base + h``, or with a TILE_RING
    of buffers in the ring's buffer of the program's half ``q + h`` (tile_ring: the ring's ready and
    written barriers, q, and the consumer: ``_ring_ready``), waited for (the first half: by the
    caller), ruled on where ``finite`` and handed back written (the tile producer stores it and
    refills the buffer: ``_ws_fetch_halves``). Without the ring the caller checks ``finite`` and
    hands the whole unit back."""
    HALF: gl.constexpr = acc.shape[1]
    M, N, NB, scales = codec
    if TILE_RING:
        ready, written, q, consumer = tile_ring
        slot = (q + h) % TILE_RING
        _ring_ready(ready, q + h, consumer, TILE_RING, pred=h > 0)
        if finite:
            _step_half(acc, slot, om, on + h * HALF, tile_bufs, (M, N, NB, scales, row_scales), hyper,
                       grad_scale_ptr, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES,
                       FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2)
        _hand_back(written.index(slot))
    else:
        _step_half(acc, base + h, om, on + h * HALF, tile_bufs, (M, N, NB, scales, row_scales), hyper,
                   grad_scale_ptr, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES,
                   FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2)


# ---------------------------------------------------------------------------
# persistent and warp-specialized
# ---------------------------------------------------------------------------
# One program per SM walks its tiles. Two one-warp producers keep the copy engines busy on
# their own: one streams dY/X slabs through a ring of STAGES buffers, the other fetches each
# unit's weight and states into its consumer's tile buffer and stores them back once the consumer
# has written them. Two consumer warpgroups run the wgmma main loop, the guard and the rule. A
# unit is a consumer's share of a tile, in one of four schedules (``ROW_BLOCKS`` 64-row blocks
# per tile, ``COOPERATIVE``):
# - ping-pong (1, CUTLASS's schedule for epilogue-heavy GEMMs): a unit is a whole 64-row
#   tile, the consumers take alternate tiles and their main loops take turns, so one's rule
#   and stores run beside the other's GEMM. Measured in session 8 (docs/kernel_history.md, five-deep
#   ring): 0.96-1.38x the committed Triton configs in 30 cells at BT <= 1024, faster in 28;
#   a single consumer, which ran its rule between its own main loops, was 0.81-0.87x.
# - cooperative (2): a unit is one 64-row half of a 128-row tile, both consumers work on the
#   same tile at once and share its X slab, so a tile reads 32 B of slabs per output and
#   k-step instead of 48; the next tile's weight and states arrive during its main loop.
# - tall ping-pong (2, not cooperative): ping-pong on 128-row tiles, 32 B of slabs per output
#   and k-step as in the cooperative one; a unit goes through its consumer's 64-row buffer in
#   two passes, the second's rows fetched once the first's are stored (session 14: 1.02-1.22x
#   at BT 1024 for AdamW bf16 and SGD-momentum, slower at BT 512, where that wait shows).
# - cooperative tall (4, cooperative): a unit is one 128-row half of a 256-row tile, through its
#   consumer's buffer in two passes as a tall unit; 24 B of slabs per output and k-step.
# Consumer c takes units c, c + 2, ... in all; a unit's buffer is its consumer's. Once the
# consumer has written a pass's results into it, the tile producer stores them and, when the TMA
# has read them, fills the buffer again (``_ws_store_fill``), so no consumer ever waits on a store:
# until session 21 the consumer waited for its stores after its next unit's first wgmma (and before
# session 14 before its next turn, 4-10% slower). Session 21 call 8: 0.985-1.03x that at BT <= 1024.
# With a tile ring (ping-pong, ``TileConfig.tile_ring``, session 26) the consumers share two or
# three column-half buffers instead (``_ws_fetch_halves``), each half handed back as soon as it is
# written; what that saves goes to the slab ring (three: 1.02-1.12x in 14 of 16 swept cells).


# Diagnostics: with TRACE_TILES > 0 each consumer writes the SM's clock at these boundaries of
# its first TRACE_TILES units into trace_ptr[program, consumer, unit, phase]
# (``forge_mcore.bench.timeline`` reads them). "stores issued" is the consumer handing the buffer
# to the tile producer (which stores it), and "released" is stamped in the consumer's next unit
# (after its first wgmma), so a unit's "stores drained" is that unit's turn wait.
TRACE_PHASE_NAMES = ("turn", "main loop", "main loop done", "tile ready", "stores issued", "released")
TRACE_PHASES = gl.constexpr(len(TRACE_PHASE_NAMES))


@gluon.jit
def _stamp(trace_ptr, j, PHASE: gl.constexpr, CONSUMER: gl.constexpr, TRACE_TILES: gl.constexpr):
    if TRACE_TILES > 0:
        if j < TRACE_TILES:
            now = _clock()
            gl.store(trace_ptr + ((gl.program_id(0) * 2 + CONSUMER) * TRACE_TILES + j) * TRACE_PHASES + PHASE, now)


# Registers per thread of the second consumer warpgroup (setmaxnreg): with two consumer
# warpgroups and two one-warp producers, 320 threads share the SM's 64 K registers.
WS_CONSUMER_REGS = gl.constexpr(232)
# The tile producer's when it copies the tiles itself (``_fetch_tile_lsu``; 40 spill its addresses):
# 2 x 128 x 232 + 32 x 40 + 32 x 88 registers of the 64 K.
PRODUCER_REGS_LSU = gl.constexpr(88)


@gluon.jit
def _ws_tiles(M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """How many tiles this program walks: pid, pid + programs, ..."""
    return gl.cdiv(gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N) - gl.program_id(0), gl.num_programs(0))


@gluon.jit
def _ws_tile(i, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
    pid_m, pid_n = _tile_ids(gl.program_id(0) + i * gl.num_programs(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    return pid_m * BLOCK_M, pid_n * BLOCK_N


@gluon.jit
def _ws_unit(u, M, N, ROWS: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
             ROW_BLOCKS: gl.constexpr, UNITS_PER_TILE: gl.constexpr):
    """Unit ``u`` of this program: its tile (this program's count) and the origin of its rows."""
    t = u // UNITS_PER_TILE
    om, on = _ws_tile(t, M, N, ROW_BLOCKS * ROWS, BLOCK_N, GROUP_M)
    return t, om + (u % UNITS_PER_TILE) * (ROW_BLOCKS // UNITS_PER_TILE) * ROWS, on


@gluon.jit
def _clock():
    return gl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=gl.int64, is_pure=False, pack=1)


@gluon.jit
def _wave_wait(wave_ptr, i, tiles, syncing, WAVE_SYNC: gl.constexpr):
    """``TileConfig.wave_sync``: this program's slab producer arrives at its round ``i`` (its tile
    ``i``) and, while ``syncing``, waits until every program has, or WAVE_SYNC cycles have passed.
    A round's programs then stream the same dY and X slabs at the same k, which L2 serves once;
    apart, each reads its own from HBM (session 51: the LM head's DRAM reads at BT 16384 40-82 GB
    a step, 27-28 GB in step). A throttle only: what the kernel computes does not depend on it.
    Returns whether to wait at the next round: not after a wait that timed out past round 0 (a
    program not running, its SM taken by another kernel: such a launch loses two timeouts per
    program, not one per round). Round 0's arrivals may spread by a tile (launched after a step,
    a program starts when that step's program on its SM ends), so its timeout stops nothing.
    wave_ptr: an int64 counter of arrivals that no launch resets; each adds ``tiles`` (an arrival
    per tile) after the launches before it have ended (the stream's order, or PDL's wait), so this
    launch's count starts at the multiple of ``tiles`` below any arrival's, and no fence is needed."""
    arrived = gl.atomic_add(wave_ptr, 1, sem="relaxed")
    # arrivals at rounds 0..i: every program's at each full round, the last round's programs'
    target = arrived - arrived % tiles + gl.minimum((i + 1) * gl.num_programs(0), tiles)
    start = _clock()
    while syncing & (gl.load(wave_ptr, volatile=True) < target) & (_clock() - start < WAVE_SYNC):
        pass
    return syncing & ((_clock() - start < WAVE_SYNC) | (i == 0))


@gluon.jit
def _ws_slab_producer(descs, tile_bufs, ring, bars, wave_ptr, M, N, K, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                      HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, ROW_BLOCKS: gl.constexpr, WAVE_SYNC: gl.constexpr,
                      PDL: gl.constexpr):
    _after_prior_grids(PDL)
    dy_desc, x_desc, tile_descs = descs
    a_ring, b_ring = ring
    slab_ready, slab_empty, epi_ready, epi_empty, order = bars
    BLOCK_K: gl.constexpr = dy_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = ROW_BLOCKS * dy_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = 2 * x_desc.block_type.shape[1]
    STAGES: gl.constexpr = slab_ready.type.shape[0]
    num_k = gl.cdiv(K, BLOCK_K)
    step = 0
    syncing = gl.program_id(0) >= 0  # (a runtime true: the loop carries it)
    for i in range(_ws_tiles(M, N, BLOCK_M, BLOCK_N)):
        om, on = _ws_tile(i, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        if WAVE_SYNC > 0:
            syncing = _wave_wait(wave_ptr, i, gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N), syncing, WAVE_SYNC)
        for k in range(num_k):
            s = step % STAGES
            mbarrier.wait(slab_empty.index(s), ((step // STAGES) & 1) ^ 1)  # passes at once on a fresh ring
            _load_slab(dy_desc, x_desc, a_ring, b_ring, s, k, om, on, slab_ready.index(s), ROW_BLOCKS)
            step += 1


@gluon.jit
def _ws_tile_producer(descs, tile_src, tile_bufs, ring, bars, M, N, K, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                      HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, ROW_BLOCKS: gl.constexpr,
                      COOPERATIVE: gl.constexpr, SHARED_TILE: gl.constexpr, MAINLOOP_ONLY: gl.constexpr,
                      TILE_LSU: gl.constexpr, TILE_RING: gl.constexpr, PASS_BUFFERS: gl.constexpr,
                      FIRST_FILL_AFTER: gl.constexpr, SERIAL_FILLS: gl.constexpr, PDL: gl.constexpr):
    _after_prior_grids(PDL)
    if not MAINLOOP_ONLY:
        if FIRST_FILL_AFTER > 0:
            # the first fill waits until the program's first FIRST_FILL_AFTER slabs (at most STAGES:
            # TileConfig.first_fill_after), or all it has, have landed; slab s < STAGES is its stage's phase 0
            dy_desc, x_desc, _ = descs
            slabs = (_ws_tiles(M, N, ROW_BLOCKS * dy_desc.block_type.shape[1], 2 * x_desc.block_type.shape[1])
                     * gl.cdiv(K, dy_desc.block_type.shape[0]))
            mbarrier.wait(bars[0].index(gl.minimum(slabs, FIRST_FILL_AFTER) - 1), 0)
        w_desc, s0_desc, s1_desc, s2_desc = descs[2]
        # the bytes of one fill: the weight's and each present state's two column halves
        FILL_BYTES: gl.constexpr = 2 * (w_desc.block_type.nbytes + HAS_S0 * s0_desc.block_type.nbytes
                                        + HAS_S1 * s1_desc.block_type.nbytes + HAS_S2 * s2_desc.block_type.nbytes)
        if TILE_RING:
            _ws_fetch_halves(descs, tile_bufs, bars, M, N, GROUP_M, HAS_S0, HAS_S1, HAS_S2, FILL_BYTES // 2,
                             TILE_RING, SERIAL_FILLS)
        elif SHARED_TILE:
            _ws_fetch_units_shared(descs, tile_bufs, bars, M, N, GROUP_M, HAS_S0, HAS_S1, HAS_S2, ROW_BLOCKS,
                                   FILL_BYTES)
        else:
            _ws_fetch_units(descs, tile_src, tile_bufs, bars, M, N, GROUP_M, HAS_S0, HAS_S1, HAS_S2, ROW_BLOCKS,
                            COOPERATIVE, TILE_LSU, PASS_BUFFERS, FILL_BYTES)


@gluon.jit
def _ws_fetch_units(descs, tile_src, tile_bufs, bars, M, N, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                    HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, ROW_BLOCKS: gl.constexpr,
                    COOPERATIVE: gl.constexpr, TILE_LSU: gl.constexpr, PASS_BUFFERS: gl.constexpr,
                    FILL_BYTES: gl.constexpr):
    dy_desc, x_desc, tile_descs = descs
    slab_ready, slab_empty, epi_ready, epi_empty, order = bars
    ROWS: gl.constexpr = dy_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = 2 * x_desc.block_type.shape[1]
    UNITS_PER_TILE: gl.constexpr = 2 if COOPERATIVE else 1  # a cooperative tile: a unit per consumer
    PASSES: gl.constexpr = ROW_BLOCKS // UNITS_PER_TILE
    units = UNITS_PER_TILE * _ws_tiles(M, N, ROW_BLOCKS * ROWS, BLOCK_N)
    # Buffer b (its barriers' index; column halves 2 b, 2 b + 1) of consumer c: c, or with
    # PASS_BUFFERS c * PASSES + p for its units' pass p. Each fill goes in once the buffer's last
    # fill has been written by the consumer and stored by this producer (``_ws_store_fill``). In
    # the order the consumers need them: both consumers' first passes before either's second. One
    # buffer per consumer: fill f = j * PASSES + p is its unit j's pass p, and a second pass waits
    # for its first pass's stores; a buffer per pass: fill j is unit j's, so every pass of a unit
    # arrives during its main loop. Each buffer's last fill is stored after the loop.
    for j in range(gl.cdiv(units, 2)):
        for p in gl.static_range(PASSES):
            for c in gl.static_range(2):
                u = 2 * j + c
                if u < units:
                    t, om, on = _ws_unit(u, M, N, ROWS, BLOCK_N, GROUP_M, ROW_BLOCKS, UNITS_PER_TILE)
                    if PASS_BUFFERS:
                        b = c * PASSES + p
                        f = j
                        if j > 0:  # the buffer's last fill: the consumer's previous unit's pass p
                            _ws_store_unit(descs, tile_bufs, epi_empty, b, f - 1, 2 * b, u - 2, p, M, N, GROUP_M,
                                           ROW_BLOCKS, UNITS_PER_TILE, HAS_S0, HAS_S1, HAS_S2)
                    else:
                        b = c
                        f = j * PASSES + p
                        if p > 0:  # the buffer's last fill: this unit's previous pass
                            _ws_store_fill(descs, tile_bufs, epi_empty, b, f - 1, 2 * b, om + (p - 1) * ROWS, on,
                                           HAS_S0, HAS_S1, HAS_S2)
                        elif j > 0:  # or the consumer's previous unit's last pass
                            _ws_store_unit(descs, tile_bufs, epi_empty, b, f - 1, 2 * b, u - 2, PASSES - 1, M, N,
                                           GROUP_M, ROW_BLOCKS, UNITS_PER_TILE, HAS_S0, HAS_S1, HAS_S2)
                    if TILE_LSU:
                        _fetch_tile_lsu(tile_src[0], tile_src[1], tile_bufs, 2 * b, om + p * ROWS, on, M, N,
                                        epi_ready.index(b), HAS_S0, HAS_S1, HAS_S2)
                    else:
                        mbarrier.expect(epi_ready.index(b), FILL_BYTES)
                        _fetch_tile(tile_descs, tile_bufs, 2 * b, om + p * ROWS, on, epi_ready.index(b), HAS_S0,
                                    HAS_S1, HAS_S2)
    for c in gl.static_range(2):  # each buffer's last fill
        if units > c:
            last = 2 * ((units - 1 - c) // 2) + c
            if PASS_BUFFERS:
                for p in gl.static_range(PASSES):
                    _ws_store_unit(descs, tile_bufs, epi_empty, c * PASSES + p, last // 2, 2 * (c * PASSES + p),
                                   last, p, M, N, GROUP_M, ROW_BLOCKS, UNITS_PER_TILE, HAS_S0, HAS_S1, HAS_S2)
            else:
                _ws_store_unit(descs, tile_bufs, epi_empty, c, (last // 2) * PASSES + PASSES - 1, 2 * c, last,
                               PASSES - 1, M, N, GROUP_M, ROW_BLOCKS, UNITS_PER_TILE, HAS_S0, HAS_S1, HAS_S2)


@gluon.jit
def _ws_fetch_units_shared(descs, tile_bufs, bars, M, N, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                           HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, ROW_BLOCKS: gl.constexpr,
                           FILL_BYTES: gl.constexpr):
    """``_ws_fetch_units`` into one buffer that the ping-pong consumers take in turn
    (``TileConfig.epilogue_stages`` 1): fills in unit order, each once the previous fill's consumer
    has written it and this producer has stored it. Each consumer still counts only its own fills
    on its own barriers, and the producer waits for every one of them in order, so no barrier runs
    a phase ahead of its waiter. What the buffer saves goes to the slab ring (at BT 16384 AdamW's
    bf16 moments fit five slabs instead of four); the next unit's loads then wait for the last
    one's stores, which only a long main loop hides."""
    dy_desc, x_desc, tile_descs = descs
    slab_ready, slab_empty, epi_ready, epi_empty, order = bars
    ROWS: gl.constexpr = dy_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = 2 * x_desc.block_type.shape[1]
    PASSES: gl.constexpr = ROW_BLOCKS  # ping-pong: a unit is a whole tile, in 64-row passes
    units = _ws_tiles(M, N, ROW_BLOCKS * ROWS, BLOCK_N)
    for u in range(units):
        c = u % 2  # unit u is consumer c's j-th
        j = u // 2
        t, om, on = _ws_unit(u, M, N, ROWS, BLOCK_N, GROUP_M, ROW_BLOCKS, 1)
        for p in gl.static_range(PASSES):
            f = j * PASSES + p  # consumer c's own fill count
            if p > 0:  # its own previous pass
                _ws_store_fill(descs, tile_bufs, epi_empty, c, f - 1, 0, om + (p - 1) * ROWS, on, HAS_S0, HAS_S1,
                               HAS_S2)
            elif u > 0:  # unit u - 1's last pass, the other consumer's fill ((u + 1) // 2) * PASSES - 1
                _ws_store_unit(descs, tile_bufs, epi_empty, 1 - c, ((u + 1) // 2) * PASSES - 1, 0, u - 1, PASSES - 1,
                               M, N, GROUP_M, ROW_BLOCKS, 1, HAS_S0, HAS_S1, HAS_S2)
            mbarrier.expect(epi_ready.index(c), FILL_BYTES)
            _fetch_tile(tile_descs, tile_bufs, 0, om + p * ROWS, on, epi_ready.index(c), HAS_S0, HAS_S1, HAS_S2)
    if units > 0:  # the last unit's last pass
        last = units - 1
        _ws_store_unit(descs, tile_bufs, epi_empty, last % 2, (last // 2) * PASSES + PASSES - 1, 0, last,
                       PASSES - 1, M, N, GROUP_M, ROW_BLOCKS, 1, HAS_S0, HAS_S1, HAS_S2)


@gluon.jit
def _ws_fetch_halves(descs, tile_bufs, bars, M, N, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                     HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, HALF_BYTES: gl.constexpr, RING: gl.constexpr,
                     SERIAL: gl.constexpr):
    """``_ws_fetch_units`` through a tile ring of RING buffers (``TileConfig.tile_ring``, ping-pong):
    the program's column halves q = 2 u + h (unit u's half h; unit u is consumer u % 2's) in order,
    half q into buffer q % RING once half q - RING is written and stored. Consumer c needs its unit's
    halves during its rule, which follows the other consumer's. Three buffers: half q - 3 is the other
    consumer's (or, for a first half, its own previous unit's second), written a turn earlier; two:
    half q - 2 is the other consumer's previous unit's, written during this unit's main loop.
    Barriers: one ``epi_empty`` per buffer (phase (q // RING) & 1 for half q: this producer waits
    for the halves in order), and one ``epi_ready`` per consumer and buffer (``_ring_ready``).
    SERIAL: half q's fill (q >= RING) also waits until half q - 1 has landed (``TileConfig.serial_fills``)."""
    dy_desc, x_desc, tile_descs = descs
    slab_ready, slab_empty, epi_ready, epi_empty, order = bars
    ROWS: gl.constexpr = dy_desc.block_type.shape[1]
    HALF: gl.constexpr = x_desc.block_type.shape[1]
    halves = 2 * _ws_tiles(M, N, ROWS, 2 * HALF)
    for q in range(halves):
        if q >= RING:
            _ws_store_half(descs, tile_bufs, epi_empty, q - RING, M, N, GROUP_M, HAS_S0, HAS_S1, HAS_S2, RING)
            if SERIAL:  # half q - 1 has landed (its barrier's next phase is a fill this producer has yet to issue)
                _ring_ready(epi_ready, q - 1, ((q - 1) // 2) % 2, RING)
        t, om, on = _ws_unit(q // 2, M, N, ROWS, 2 * HALF, GROUP_M, 1, 1)
        ready = epi_ready.index((q // 2) % 2 * RING + q % RING)  # its consumer's barrier of the buffer
        mbarrier.expect(ready, HALF_BYTES)
        _fetch_tile(tile_descs, tile_bufs, q % RING, om, on + (q % 2) * HALF, ready, HAS_S0, HAS_S1, HAS_S2,
                    HALVES=1)
    for i in gl.static_range(RING):  # the last RING halves
        if halves - RING + i >= 0:
            _ws_store_half(descs, tile_bufs, epi_empty, halves - RING + i, M, N, GROUP_M, HAS_S0, HAS_S1, HAS_S2,
                           RING)


@gluon.jit
def _ws_store_half(descs, tile_bufs, epi_empty, q, M, N, GROUP_M: gl.constexpr, HAS_S0: gl.constexpr,
                   HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, RING: gl.constexpr):
    """The tile ring's half ``q`` stored once its consumer has written it, and read by the TMA
    before its buffer takes half q + RING (``_ws_store_fill``'s rule for a half)."""
    ROWS: gl.constexpr = descs[0].block_type.shape[1]
    HALF: gl.constexpr = descs[1].block_type.shape[1]
    t, om, on = _ws_unit(q // 2, M, N, ROWS, 2 * HALF, GROUP_M, 1, 1)
    mbarrier.wait(epi_empty.index(q % RING), (q // RING) & 1)
    _store_tile(descs[2], tile_bufs, q % RING, om, on + (q % 2) * HALF, HAS_S0, HAS_S1, HAS_S2, HALVES=1)
    tma.store_wait(pendings=0)


@gluon.jit
def _ws_store_fill(descs, tile_bufs, epi_empty, b, f, base, om, on, HAS_S0: gl.constexpr, HAS_S1: gl.constexpr,
                   HAS_S2: gl.constexpr):
    """The tile producer stores fill ``f`` of buffer ``b`` (rows at ``om``, column halves ``base`` and
    ``base + 1``) once its consumer has written it (``_ws_pass``), and waits until the TMA has read
    it, so the buffer can take the next fill. The consumer never waits on its stores: in the
    schedule before session 21 it did, inside its next main loop."""
    mbarrier.wait(epi_empty.index(b), f & 1)
    _store_tile(descs[2], tile_bufs, base, om, on, HAS_S0, HAS_S1, HAS_S2)
    tma.store_wait(pendings=0)


@gluon.jit
def _ws_store_unit(descs, tile_bufs, epi_empty, b, f, base, u, p, M, N, GROUP_M: gl.constexpr,
                   ROW_BLOCKS: gl.constexpr, UNITS_PER_TILE: gl.constexpr, HAS_S0: gl.constexpr,
                   HAS_S1: gl.constexpr, HAS_S2: gl.constexpr):
    """``_ws_store_fill`` of unit ``u``'s 64-row pass ``p`` (fill ``f`` of buffer ``b``)."""
    ROWS: gl.constexpr = descs[0].block_type.shape[1]
    BLOCK_N: gl.constexpr = 2 * descs[1].block_type.shape[1]
    t, om, on = _ws_unit(u, M, N, ROWS, BLOCK_N, GROUP_M, ROW_BLOCKS, UNITS_PER_TILE)
    _ws_store_fill(descs, tile_bufs, epi_empty, b, f, base, om + p * ROWS, on, HAS_S0, HAS_S1, HAS_S2)


@gluon.jit
def _ws_pass(acc_a, acc_b, finite, row_scales_a, row_scales_b, om, on, tile_bufs, written, hyper, codec,
             grad_scale_ptr, UPDATE: gl.constexpr, VARIANT: gl.constexpr, HAS_S0: gl.constexpr,
             HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, HAS_GRAD_SCALE: gl.constexpr, INT8: gl.constexpr,
             MASK_EDGES: gl.constexpr, FAST_DIVISION: gl.constexpr, NONNEG_S0: gl.constexpr, NONNEG_S1: gl.constexpr,
             NONNEG_S2: gl.constexpr, BUF: gl.constexpr):
    """A 64-row block of the consumer's unit, its weight and states in the buffer at ``BUF``: the
    rule where ``finite`` (``_guard``), then the buffer handed to the tile producer (``written``)."""
    if finite:
        _rule_on_tile(acc_a, acc_b, BUF, om, on, tile_bufs, codec, row_scales_a, row_scales_b, hyper,
                      grad_scale_ptr, finite, (written, written, 0), UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2,
                      HAS_GRAD_SCALE, INT8, MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2, False)
    # Written: the tile producer stores the buffer (``_ws_store_fill``); a non-finite block goes back
    # unchanged (the same bits).
    _hand_back(written)


@gluon.jit
def _hand_back(written):
    """A consumer's buffer to the tile producer: every thread's writes fenced, then one arrive."""
    fence_async_shared()
    _cta_barrier()
    mbarrier.arrive(written, count=1)


@triton.constexpr_function
def ring_parity_bits(ring: int) -> int:
    """For a tile ring of ``ring`` buffers: bit k (k < 2 ring) is the parity of a consumer's k-th half's
    fill count on the consumer's own ready barrier of that half's buffer (``_ring_ready``), and the
    pattern repeats every 2 ring halves. A consumer's k-th half is the program's half
    q = 4 (k // 2) + 2 c + k % 2 (its units are c, c + 2, ...), in buffer q % ring; the consumer c
    only relabels the buffers, so the counts are consumer 0's. (Two buffers: 0b1100, the unit's
    parity; three: 0b110100.)"""
    counts, bits = [0] * ring, 0
    for k in range(2 * ring):
        buffer = (4 * (k // 2) + k % 2) % ring
        bits |= (counts[buffer] & 1) << k
        counts[buffer] += 1
    # every buffer takes an even number of a period's halves, so the next period's parities repeat
    assert all(n % 2 == 0 for n in counts), f"a ring of {ring} buffers has no period of 2 x {ring} halves"
    return bits


@gluon.jit
def _ring_ready(epi_ready, q, consumer, RING: gl.constexpr, pred=True):
    """Wait until the tile ring's half ``q`` (``consumer``'s) is in its buffer. Each consumer has a
    ready barrier per buffer: on one the consumers share, a consumer could reach its wait while the
    buffer's previous fill, the other consumer's, is still in flight, and that barrier's parity
    would already read as this fill's (two of three halves, and every half of a two-buffer ring,
    follow the other consumer's in their buffer). On its own barrier a consumer's previous fill is
    one it has consumed (tests/unit/test_tile_ring_protocol.py models both). Its k-th half (k = 2 j + h,
    of its j-th unit) waits on its fill count's parity there (``ring_parity_bits``)."""
    BITS: gl.constexpr = ring_parity_bits(RING)
    k = (q // 4) * 2 + q % 2
    mbarrier.wait(epi_ready.index(consumer * RING + q % RING), (BITS >> (k % (2 * RING))) & 1, pred=pred)


@gluon.jit
def _ws_consumer(descs, tile_bufs, ring, bars, hyper_ptr, sumsq_ptr, nonfinite_ptr, grad_scale_ptr, M, N, K,
                 scales, NB, UPDATE: gl.constexpr, VARIANT: gl.constexpr, HAS_S0: gl.constexpr,
                 HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, HAS_GRAD_SCALE: gl.constexpr, GROUP_M: gl.constexpr,
                 INT8: gl.constexpr, MASK_EDGES: gl.constexpr, FAST_DIVISION: gl.constexpr, NONNEG_S0: gl.constexpr,
                 NONNEG_S1: gl.constexpr,
                 NONNEG_S2: gl.constexpr,
                 ROW_BLOCKS: gl.constexpr, COOPERATIVE: gl.constexpr, SHARED_TILE: gl.constexpr,
                 TILE_RING: gl.constexpr, PASS_BUFFERS: gl.constexpr, MAINLOOP_ONLY: gl.constexpr, trace_ptr,
                 TRACE_TILES: gl.constexpr, HYPER_COUNT: gl.constexpr, CONSUMER: gl.constexpr, PDL: gl.constexpr,
                 num_warps: gl.constexpr):
    # Consumer CONSUMER (0 or 1, one warpgroup each) takes this program's units CONSUMER,
    # CONSUMER + 2, ... Not cooperative (ping-pong), their main loops take turns (``order``), so
    # each one's rule and stores run beside the other's GEMM; cooperative, both run the same
    # tile's main loop at once, on their own dY row block and the shared X slab.
    dy_desc, x_desc, tile_descs = descs
    a_ring, b_ring = ring
    slab_ready, slab_empty, epi_ready, epi_empty, order = bars
    BLOCK_K: gl.constexpr = dy_desc.block_type.shape[0]
    ROWS: gl.constexpr = dy_desc.block_type.shape[1]
    HALF: gl.constexpr = x_desc.block_type.shape[1]
    STAGES: gl.constexpr = slab_ready.type.shape[0]
    UNITS_PER_TILE: gl.constexpr = 2 if COOPERATIVE else 1  # a cooperative tile: a unit per consumer
    PASSES: gl.constexpr = ROW_BLOCKS // UNITS_PER_TILE  # 64-row blocks of a unit (tall: 2)
    A_SLOT: gl.constexpr = PASSES * (CONSUMER % UNITS_PER_TILE)  # its first dY block in a ring stage
    # its tile buffer (the barriers' index; ``_ws_fetch_units``), or with PASS_BUFFERS its first pass's
    # (the second's is the next), and that buffer's first column half
    BAR: gl.constexpr = CONSUMER * PASSES if PASS_BUFFERS else CONSUMER
    BUF: gl.constexpr = 0 if SHARED_TILE else 2 * BAR
    layout: gl.constexpr = _mma_layout(ROWS, HALF, num_warps)  # a column half's (the epilogue's)
    wide: gl.constexpr = _mma_layout(ROWS, 2 * HALF, num_warps)  # a whole row block's (the main loop's)
    # the ring's X halves of a stage lie back to back, as one [BLOCK_K, 2 * HALF] block of the same
    # swizzled layout (its 64-column chunks outermost): one wgmma reads both
    if _PUBLIC_REINTERPRET:
        b_wide = b_ring.reinterpret(b_ring.dtype, [STAGES, BLOCK_K, 2 * HALF], b_ring.layout)
    else:
        b_wide = b_ring._reinterpret(b_ring.dtype, [STAGES, BLOCK_K, 2 * HALF], b_ring.layout)
    num_k = gl.cdiv(K, BLOCK_K)
    units = UNITS_PER_TILE * _ws_tiles(M, N, ROW_BLOCKS * ROWS, 2 * HALF)
    _after_prior_grids(PDL)
    hyper = load_hyper(hyper_ptr, HYPER_COUNT)  # once: a load per tile stalled each rule on its latency
    codec = (M, N, NB, scales)
    for j in range(gl.cdiv(units - CONSUMER, 2)):
        u = 2 * j + CONSUMER
        t, om, on = _ws_unit(u, M, N, ROWS, 2 * HALF, GROUP_M, ROW_BLOCKS, UNITS_PER_TILE)
        _stamp(trace_ptr, j, 0, CONSUMER, TRACE_TILES)
        if not COOPERATIVE:
            # the other consumer has waited for every slab before this tile's (a ring slot's
            # barrier is then never more than one phase ahead of its waiter)
            if CONSUMER == 1:
                mbarrier.wait(order.index(0), j & 1)
            else:
                mbarrier.wait(order.index(1), (j - 1) & 1, pred=j > 0)
        _stamp(trace_ptr, j, 1, CONSUMER, TRACE_TILES)
        # (the main-loop-only variant reads no state: zeros)
        row_scales_a = _row_scales(scales, om, on, M, NB, ROWS, layout, HAS_S0, HAS_S1, HAS_S2,
                                   INT8 and not MAINLOOP_ONLY)
        row_scales_b = _row_scales(scales, om, on + HALF, M, NB, ROWS, layout, HAS_S0, HAS_S1, HAS_S2,
                                   INT8 and not MAINLOOP_ONLY)
        acc_top = gl.zeros((ROWS, 2 * HALF), dtype=gl.float32, layout=wide)
        acc_bottom = acc_top  # a tall unit's second 64-row block (unused otherwise)
        row_scales_c = row_scales_a
        row_scales_d = row_scales_b
        if PASSES == 2:
            row_scales_c = _row_scales(scales, om + ROWS, on, M, NB, ROWS, layout, HAS_S0, HAS_S1, HAS_S2,
                                       INT8 and not MAINLOOP_ONLY)
            row_scales_d = _row_scales(scales, om + ROWS, on + HALF, M, NB, ROWS, layout, HAS_S0, HAS_S1, HAS_S2,
                                       INT8 and not MAINLOOP_ONLY)
        step = t * num_k
        for k in range(num_k):
            s = step % STAGES
            mbarrier.wait(slab_ready.index(s), (step // STAGES) & 1)
            if PASSES == 2:
                acc_top, acc_bottom = _mma_step_tall(a_ring, b_wide, ROW_BLOCKS * s + A_SLOT, s, acc_top, acc_bottom)
            else:
                acc_top = _mma_step(a_ring, b_wide, ROW_BLOCKS * s + A_SLOT, s, acc_top)
            # the previous step's wgmma have retired: its slab buffer goes back to the producer
            # (cooperative: once both consumers have arrived)
            mbarrier.arrive(slab_empty.index((step + STAGES - 1) % STAGES), count=1, pred=k > 0)
            if k == 0 and j > 0:
                _stamp(trace_ptr, j - 1, 5, CONSUMER, TRACE_TILES)
            step += 1
        if not COOPERATIVE:
            mbarrier.arrive(order.index(CONSUMER), count=1)
        if PASSES == 2:
            acc_top, acc_bottom = warpgroup_mma_wait(num_outstanding=0, deps=(acc_top, acc_bottom))
        else:
            acc_top = warpgroup_mma_wait(num_outstanding=0, deps=(acc_top,))
        acc_a, acc_b = _column_halves(acc_top, layout)
        acc_c = acc_a
        acc_d = acc_b
        if PASSES == 2:
            acc_c, acc_d = _column_halves(acc_bottom, layout)
        mbarrier.arrive(slab_empty.index((step + STAGES - 1) % STAGES), count=1)
        _stamp(trace_ptr, j, 2, CONSUMER, TRACE_TILES)

        if MAINLOOP_ONLY:
            # the benchmark's "epilogue compiled out" arm: the unit reduced to one atomic, as in
            # the Triton kernel's MODE_MAINLOOP
            total = acc_a + acc_b
            if PASSES == 2:
                total += acc_c + acc_d
            gl.atomic_add(sumsq_ptr, gl.sum(gl.sum(total, axis=1), axis=0), sem=TELEMETRY_SEM)
        elif TILE_RING:  # the unit's halves q, q + 1 in the ring's buffers q % TILE_RING, (q + 1) % TILE_RING
            finite = _guard(acc_a, acc_b, sumsq_ptr, nonfinite_ptr)
            q = 2 * u
            _ring_ready(epi_ready, q, CONSUMER, TILE_RING)
            _stamp(trace_ptr, j, 3, CONSUMER, TRACE_TILES)
            _rule_on_tile(acc_a, acc_b, 0, om, on, tile_bufs, codec, row_scales_a, row_scales_b, hyper,
                          grad_scale_ptr, finite, (epi_ready, epi_empty, q, CONSUMER), UPDATE, VARIANT, HAS_S0,
                          HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8, MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1,
                          NONNEG_S2, TILE_RING)
            _stamp(trace_ptr, j, 4, CONSUMER, TRACE_TILES)
        else:
            # the buffer's fill j * PASSES + p holds pass p's weight and states (PASS_BUFFERS: fill j of
            # pass p's own buffer)
            finite = _guard(acc_a, acc_b, sumsq_ptr, nonfinite_ptr)
            mbarrier.wait(epi_ready.index(BAR), (j if PASS_BUFFERS else j * PASSES) & 1)
            _stamp(trace_ptr, j, 3, CONSUMER, TRACE_TILES)
            _ws_pass(acc_a, acc_b, finite, row_scales_a, row_scales_b, om, on, tile_bufs, epi_empty.index(BAR),
                     hyper, codec, grad_scale_ptr, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, INT8,
                     MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2, BUF)
            if PASSES == 2:  # the second block's rows: fetched once the first's are stored, or in their own buffer
                BAR_2: gl.constexpr = BAR + 1 if PASS_BUFFERS else BAR
                BUF_2: gl.constexpr = BUF + 2 if PASS_BUFFERS else BUF
                finite = _guard(acc_c, acc_d, sumsq_ptr, nonfinite_ptr)
                mbarrier.wait(epi_ready.index(BAR_2), (j if PASS_BUFFERS else j * PASSES + 1) & 1)
                _ws_pass(acc_c, acc_d, finite, row_scales_c, row_scales_d, om + ROWS, on, tile_bufs,
                         epi_empty.index(BAR_2),
                         hyper, codec, grad_scale_ptr, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE,
                         INT8, MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2, BUF_2)
            _stamp(trace_ptr, j, 4, CONSUMER, TRACE_TILES)


@gluon.jit
def gluon_ws_fused_step_kernel(
    dy_desc, x_desc, w_desc, s0_desc, s1_desc, s2_desc,
    hyper_ptr, sumsq_ptr, nonfinite_ptr, grad_scale_ptr,
    M, N, K, s0_scale, s1_scale, s2_scale, NB, trace_ptr,
    w_ptr, s0_ptr, s1_ptr, s2_ptr, w_stride, s_stride, wave_ptr,
    UPDATE: gl.constexpr, VARIANT: gl.constexpr,
    HAS_S0: gl.constexpr, HAS_S1: gl.constexpr, HAS_S2: gl.constexpr, HAS_GRAD_SCALE: gl.constexpr,
    INT8: gl.constexpr, MASK_EDGES: gl.constexpr, FAST_DIVISION: gl.constexpr, NONNEG_S0: gl.constexpr,
    NONNEG_S1: gl.constexpr,
    NONNEG_S2: gl.constexpr,
    GROUP_M: gl.constexpr, STAGES: gl.constexpr, ROW_BLOCKS: gl.constexpr, COOPERATIVE: gl.constexpr,
    SHARED_TILE: gl.constexpr, MAINLOOP_ONLY: gl.constexpr, TRACE_TILES: gl.constexpr, HYPER_COUNT: gl.constexpr,
    TILE_LSU: gl.constexpr, TILE_RING: gl.constexpr, PASS_BUFFERS: gl.constexpr, FIRST_FILL_AFTER: gl.constexpr,
    SERIAL_FILLS: gl.constexpr, WAVE_SYNC: gl.constexpr, PDL: gl.constexpr, num_warps: gl.constexpr,
):
    # dy_desc: dY (K x M) in [BLOCK_K, ROWS] blocks; x_desc: X (K x N) in [BLOCK_K, HALF] blocks;
    # w_desc, s*_desc: M x N in [ROWS, HALF] blocks (int8 codes: M x 64 NB, in fragment order; the
    # absent states: any descriptor, unused).
    # A tile is ROW_BLOCKS x ROWS rows (1: ping-pong; 2: cooperative, or tall ping-pong; 4:
    # cooperative tall) by 2 x HALF columns.
    # INT8: the states are int8 codes (uint8 for NONNEG ones, coding sqrt) with one fp32 scale per
    # row and 64-column block in s*_scale (M x NB); otherwise the scales are unused.
    # MASK_EDGES: int8 states past the weight's edge are zeroed before their block's absmax (and
    # coded canonically where a partial last block is stored whole); False where the rule keeps
    # them zero by itself (``Rule.zero_stays_zero``; TMA reads zeros there) and N is whole blocks.
    # FAST_DIVISION: the int8 codec's per-row divisions by div_rn's fast path (``TileConfig.fast_division``).
    # Launched with one program per SM (or fewer).
    # num_warps: one consumer warpgroup's (two consumers, a tile buffer each, or with SHARED_TILE
    # one buffer the ping-pong consumers take in turn: ``_ws_fetch_units_shared``).
    # MAINLOOP_ONLY: the same kernel with its epilogue compiled out (no weight/state loads,
    # rule or stores; each tile reduced into sumsq): the main-loop efficiency's denominator.
    # TRACE_TILES > 0: phase timestamps into trace_ptr (``_stamp``); 0: trace_ptr is unused.
    # HYPER_COUNT: the rule's per-step scalars in hyper_ptr.
    # PDL: launched as a programmatic dependent launch (``PDL``; the launch's own option must match).
    # TILE_LSU: the weight and states come into their tile buffers by the tile producer's cp.async
    # from w_ptr, s*_ptr (rows w_stride, s_stride elements apart; ``_fetch_tile_lsu``), not by TMA.
    # TILE_RING > 0: ping-pong through a ring of that many column-half tile buffers (``_ws_fetch_halves``).
    # PASS_BUFFERS: a tall unit's two passes through a buffer each, both filled during its main loop
    # (``TileConfig.epilogue_stages`` 4), not one after the other through one.
    # FIRST_FILL_AFTER > 0: the tile producer's first fill waits for that many slabs (``TileConfig.first_fill_after``).
    # SERIAL_FILLS: a ring's fill waits for the one before it to land (``TileConfig.serial_fills``).
    # WAVE_SYNC > 0: each round of tiles starts once every program reaches it, or after that many
    # cycles, no program waiting again once a wait past round 0 timed out (``_wave_wait``); counted in
    # wave_ptr's int64 (every launch adds its tile count). 0: wave_ptr is unused.
    a_ring = gl.allocate_shared_memory(dy_desc.dtype, [ROW_BLOCKS * STAGES] + dy_desc.block_type.shape,
                                       dy_desc.layout)
    b_ring = gl.allocate_shared_memory(x_desc.dtype, [2 * STAGES] + x_desc.block_type.shape, x_desc.layout)
    tile_descs = (w_desc, s0_desc, s1_desc, s2_desc)
    BUFFERS: gl.constexpr = 1 if SHARED_TILE else (4 if PASS_BUFFERS else 2)  # 64-row ones, two column halves each
    TILE_SLOTS: gl.constexpr = TILE_RING if TILE_RING else 2 * BUFFERS  # column halves
    tile_bufs = _allocate_tiles(tile_descs, TILE_SLOTS, HAS_S0, HAS_S1, HAS_S2)
    # a consumer's (or pass's) buffer's, or a ring buffer's: written ones, and ready ones per consumer
    # (``_ring_ready``; a shared buffer's: per consumer)
    UNIT_BARS: gl.constexpr = 4 if PASS_BUFFERS else 2
    EMPTY_BARS: gl.constexpr = TILE_RING if TILE_RING else UNIT_BARS
    READY_BARS: gl.constexpr = 2 * TILE_RING if TILE_RING else UNIT_BARS
    slab_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    slab_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    epi_ready = gl.allocate_shared_memory(gl.int64, [READY_BARS, 1], mbarrier.MBarrierLayout())
    epi_empty = gl.allocate_shared_memory(gl.int64, [EMPTY_BARS, 1], mbarrier.MBarrierLayout())
    order = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(slab_ready.index(i), count=1)
        mbarrier.init(slab_empty.index(i), count=2 if COOPERATIVE else 1)  # cooperative: both read a slab
    for i in gl.static_range(READY_BARS):
        mbarrier.init(epi_ready.index(i), count=32 if TILE_LSU else 1)  # LSU: each producer thread arrives
    for i in gl.static_range(EMPTY_BARS):
        mbarrier.init(epi_empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(order.index(i), count=1)
    descs = (dy_desc, x_desc, tile_descs)
    ring = (a_ring, b_ring)
    bars = (slab_ready, slab_empty, epi_ready, epi_empty, order)
    scales = (s0_scale, s1_scale, s2_scale)
    # (the worker partitions' arguments written out in the call: constexprs stay constexprs)
    gl.warp_specialize([
        (_ws_consumer, (descs, tile_bufs, ring, bars, hyper_ptr, sumsq_ptr, nonfinite_ptr, grad_scale_ptr,
                        M, N, K, scales, NB, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, GROUP_M,
                        INT8, MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2, ROW_BLOCKS, COOPERATIVE,
                        SHARED_TILE, TILE_RING, PASS_BUFFERS,
                        MAINLOOP_ONLY, trace_ptr, TRACE_TILES, HYPER_COUNT, 0, PDL, num_warps)),
        (_ws_consumer, (descs, tile_bufs, ring, bars, hyper_ptr, sumsq_ptr, nonfinite_ptr, grad_scale_ptr,
                        M, N, K, scales, NB, UPDATE, VARIANT, HAS_S0, HAS_S1, HAS_S2, HAS_GRAD_SCALE, GROUP_M,
                        INT8, MASK_EDGES, FAST_DIVISION, NONNEG_S0, NONNEG_S1, NONNEG_S2, ROW_BLOCKS, COOPERATIVE,
                        SHARED_TILE, TILE_RING, PASS_BUFFERS,
                        MAINLOOP_ONLY, trace_ptr, TRACE_TILES, HYPER_COUNT, 1, PDL, num_warps)),
        (_ws_slab_producer, (descs, tile_bufs, ring, bars, wave_ptr, M, N, K, GROUP_M, HAS_S0, HAS_S1, HAS_S2,
                             ROW_BLOCKS, WAVE_SYNC, PDL)),
        (_ws_tile_producer, (descs, ((w_ptr, s0_ptr, s1_ptr, s2_ptr), (w_stride, s_stride)), tile_bufs, ring, bars,
                             M, N, K, GROUP_M, HAS_S0, HAS_S1, HAS_S2, ROW_BLOCKS, COOPERATIVE, SHARED_TILE,
                             MAINLOOP_ONLY, TILE_LSU, TILE_RING, PASS_BUFFERS, FIRST_FILL_AFTER, SERIAL_FILLS, PDL)),
    ], [num_warps, 1, 1], [WS_CONSUMER_REGS, 40, PRODUCER_REGS_LSU if TILE_LSU else 40])


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------

_GL_DTYPES = {"torch.bfloat16": gl.bfloat16, "torch.float32": gl.float32, "torch.int8": gl.int8,
              "torch.uint8": gl.uint8}


def _descriptor(t, block):
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    layout = gl.NVMMASharedLayout.get_default_for(block, _GL_DTYPES[str(t.dtype)])
    return TensorDescriptor.from_tensor(t, block, layout)


# Shared memory a program may hold (H100/H200: 227 KB per block), less 1 KB for the barriers
# and the guard's cross-warp reduction.
SMEM_LIMIT = 226 * 1024


def applies(cfg: TileConfig, state: "ForgeParamState", dy: torch.Tensor, accum: torch.Tensor | None, slab_tma: bool,
            tile_tma: bool) -> bool:
    """Whether the Gluon kernel runs this step with ``cfg``: a fused step (no accumulator) with
    bf16 dY/X, every operand TMA-aligned, plain or int8 states (int8 on tall tiles spills its rule:
    0.59-0.81x the speed at BT <= 1024, session 14, where the sweeps do not pick it), a bf16 or fp32
    weight without a master copy, and the slab ring plus the tile's weight and states within shared
    memory."""
    if not (cfg.kernel in GLUON_KERNELS and state is not None and accum is None and slab_tma and tile_tma
            and dy.dtype == torch.bfloat16 and state.codec.name in ("bf16", "fp32", "int8")
            and state.store.name in ("bf16", "fp32")):
        return False
    half = cfg.block_m // cfg.row_blocks * cfg.block_n // 2  # a column half of one consumer's buffer
    half_bytes = half * (state.store.weight_dtype.itemsize
                         + sum(s.data.element_size() for s in state.slots if s is not None))
    halves = cfg.tile_ring or 2 * cfg.epilogue_stages
    return cfg.smem_bytes(2) + halves * half_bytes <= SMEM_LIMIT


def launch(cfg: TileConfig, dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, state: "ForgeParamState",
           states: Sequence[tuple[torch.Tensor, torch.Tensor | None] | None], hyper: torch.Tensor, sumsq: torch.Tensor,
           nonfinite: torch.Tensor, grad_scale: torch.Tensor | None, cache: dict | None, bind: bool = False,
           mainloop_only: bool = False, trace: torch.Tensor | None = None) -> BoundLaunch | None:
    """The fused step of ``weight`` (``state``: its ``ForgeParamState``; ``states``: the
    (codes, scales or None) pairs of its slots, None where a slot is empty) through
    ``gluon_ws_fused_step_kernel`` (one program per SM at most) with ``cfg``'s geometry,
    ``applies`` checked.

    Launched as the Triton kernel is (``kernels/launch.DirectLauncher``: no ``JITFunction.run``
    after the first launch of a specialization). With a ``cache`` (the weight's launch cache) the
    weight's and states' descriptors and the launch plan are kept there, and with ``bind`` the
    launch comes back bound for ``ops``' replay (dY, X and the grad scale swapped in per call),
    else None. ``mainloop_only``: the kernel with its epilogue compiled out, each tile's sum into
    ``sumsq``; nothing else is written (``ops.wgrad_mainloop``). ``trace``: an int64 tensor of
    [programs, 2, tiles, len(TRACE_PHASE_NAMES)] that the consumers stamp (``_stamp``; diagnostics)."""
    M, N = weight.shape
    half = cfg.block_n // 2
    rows = cfg.block_m // cfg.row_blocks  # one consumer's rows

    def tile_descriptors() -> tuple:
        w_desc = _descriptor(weight, [rows, half])
        return (w_desc, *[_descriptor(p[0], [rows, half]) if p is not None else w_desc for p in states])

    tiles = _kept(cache, ("gluon tiles", rows, weight.data_ptr()), tile_descriptors)
    grid = (_programs(cfg, M, N, weight.device.index),)
    launcher = _launcher()
    trace_tiles = trace.shape[2] if trace is not None else 0
    sources = [p[0] if p is not None else weight for p in states]  # (the absent states': never read)
    # cp.async fills where every row starts 16-element aligned (Triton then knows each copy is 16
    # bytes) and the states are as wide as the weight (their fills stop at its edge; block codes are
    # stored in whole blocks); elsewhere this config's tiles come by TMA, into the same buffers
    tile_lsu = (cfg.tile_fill == "lsu" and N % 16 == 0 and all(t.stride(0) % 16 == 0 for t in (weight, *sources))
                and all(t.shape[1] == N for t in sources))

    def build_plan():
        slots = state.slots
        constexprs = dict(
            UPDATE=state.rule.triton_update, VARIANT=state.variant,
            HAS_S0=states[0] is not None, HAS_S1=states[1] is not None, HAS_S2=states[2] is not None,
            HAS_GRAD_SCALE=grad_scale is not None, INT8=state.codec.name == "int8",
            # (int8 codes past the edge of a partial last block are stored too: zeroed, they are canonical)
            MASK_EDGES=not state.rule.zero_stays_zero or (state.codec.name == "int8" and N % 64 != 0),
            FAST_DIVISION=cfg.fast_division and state.codec.name == "int8",
            NONNEG_S0=bool(slots[0] and slots[0].nonnegative), NONNEG_S1=bool(slots[1] and slots[1].nonnegative),
            NONNEG_S2=bool(slots[2] and slots[2].nonnegative),
            GROUP_M=cfg.group_m, STAGES=cfg.num_stages,
            ROW_BLOCKS=cfg.row_blocks, COOPERATIVE=cfg.cooperative, SHARED_TILE=cfg.epilogue_stages == 1,
            MAINLOOP_ONLY=mainloop_only,
            TRACE_TILES=trace_tiles,
            HYPER_COUNT=len(state.rule.hyper_names),
            TILE_LSU=tile_lsu,
            TILE_RING=cfg.tile_ring,
            PASS_BUFFERS=cfg.epilogue_stages == 4,
            FIRST_FILL_AFTER=cfg.first_fill_after,
            SERIAL_FILLS=cfg.serial_fills,
            WAVE_SYNC=cfg.wave_sync,
            PDL=PDL,
            num_warps=cfg.num_warps // 2,  # cfg counts both consumers' warps
        )
        return launcher.plan(constexprs, {"launch_pdl": PDL}, stable=_STABLE_ARGS if cache is not None else frozenset())

    plan = _kept(cache, ("gluon plan", cfg, grad_scale is not None, mainloop_only, trace_tiles, PDL, tile_lsu),
                 build_plan)
    scales = [p[1] if p is not None and p[1] is not None else sumsq for p in states]  # sumsq: never read
    args = (_descriptor(dy, [cfg.block_k, rows]), _descriptor(x, [cfg.block_k, half]), *tiles,
            hyper, sumsq, nonfinite, grad_scale if grad_scale is not None else sumsq, M, N, dy.shape[0],
            *scales, state.codec.scale_blocks(N), trace if trace is not None else sumsq,
            weight, *sources, weight.stride(0), next((p[0].stride(0) for p in states if p is not None), N),
            _wave_counter(cfg, weight.device, cache) if cfg.wave_sync else sumsq)
    raw = launcher(grid, args, plan)
    return raw.bind(grid, args, plan, _VARYING_ARGS) if bind and raw is not None and cache is not None else None


def _wave_counter(cfg: TileConfig, device: torch.device, cache: dict | None) -> torch.Tensor:
    """``TileConfig.wave_sync``'s int64 count of arrivals (``_wave_wait``: each launch adds its tile
    count, so each launch of one weight with one tile size finds it at a multiple of that count).
    The weight's own per tile size, kept in its launch cache: its steps run one after another."""
    return _kept(cache, ("gluon wave counter", cfg.block_m, cfg.block_n),
                 lambda: torch.zeros(1, dtype=torch.int64, device=device))


def _kept(cache: dict | None, key: tuple, build):
    """``cache[key]``, built by ``build()`` on its first use and kept in the weight's launch cache;
    without a cache, built anew at each launch."""
    if cache is None:
        return build()
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _tiles(cfg, M: int, N: int) -> int:
    return -(-M // cfg.block_m) * -(-N // cfg.block_n)


def _programs(cfg, M: int, N: int, device_index: int) -> int:
    """One program per SM, or per tile where there are fewer tiles."""
    return min(_tiles(cfg, M, N), _sm_count(device_index))


def trace_buffer(cfg: TileConfig, M: int, N: int, device: torch.device) -> torch.Tensor:
    """A zeroed ``trace`` for ``launch`` of an M x N weight with ``cfg``: [programs, consumers,
    units per consumer, phases] int64."""
    programs = _programs(cfg, M, N, device.index)
    tiles_per_program = -(-_tiles(cfg, M, N) // programs)
    units_per_consumer = -(-cfg.units_per_tile * tiles_per_program // 2)
    return torch.zeros(programs, 2, units_per_consumer, len(TRACE_PHASE_NAMES), dtype=torch.int64, device=device)


# Launch arguments that are the weight's own objects at every step (its weight/state tiles,
# scalars, telemetry, state scales, the weight and states themselves and their row strides), and
# those a replay passes anew (the dY and X slabs, the
# grad scale).
_STABLE_ARGS = frozenset([*range(2, 9), 13, 14, 15, *range(18, 25)])
_VARYING_ARGS = (0, 1, 9)


@functools.cache
def _launcher():
    return DirectLauncher(gluon_ws_fused_step_kernel)


@functools.cache
def _sm_count(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count
