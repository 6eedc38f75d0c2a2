"""The fused weight-gradient + optimizer kernel (paper §2.2, Algorithm 1).

For W (M x N = out x in), dY (K x M) and X (K x N), K = BT tokens: each program
owns one output tile of G = dY^T X, accumulates it in fp32 registers over the
K axis, then -- with G never leaving registers -- loads the weight and state
tiles, applies the rule's epilogue and stores weight and state.

The rule, the state codec and the weight store enter as ``constexpr`` Triton
functions, so there is one kernel body and the compiler specializes it per
combination. Per-step scalars (lr, bias corrections, the stochastic-rounding
seed) are read from a device tensor: changing them never recompiles.

Two modes share the main loop (``MODE``):

* ``MODE_STEP``: the fused step above. With ``HAS_ACCUM`` the tile of an earlier
  partial gradient (``accum_ptr``, fp32 or bf16, out x in) is the register tile's
  starting value: the last micro-batch of an exact accumulation.
* ``MODE_ACCUMULATE``: ``accum += dY^T X`` and nothing else (the earlier
  micro-batches; the weight and state are not touched).
* ``MODE_MAINLOOP``: the main loop alone, its tile reduced to one atomic so it
  is not optimized away -- the benchmark's "epilogue compiled out" arm.

``HAS_GRAD_SCALE`` multiplies the gradient by a device scalar before the rule
(a clipping coefficient, a loss or data-parallel scale) without a recompile.

Side outputs, for telemetry and the non-finite guard: each finished tile adds
its sum of g^2 to ``sumsq_ptr`` (one fp32 atomic), and a tile whose sum of g^2
is not finite (a NaN or Inf in its gradient, or an overflowing one) adds 1 to
``nonfinite_ptr`` and writes nothing else, so its weight and state stay
bit-identical. No host synchronisation is involved.
"""

import triton
import triton.language as tl

from ..rules.base import load_hyper
from .tile_io import load_tile, prefetch_tile_l2, store_tile
from .tl_bits import bf16_to_f32, f32_to_bf16_rne

MODE_STEP = 0
MODE_ACCUMULATE = 1
MODE_MAINLOOP = 2

# The telemetry adds (sum of g^2, non-finite tile count) are relaxed: nothing in the launch
# reads them, and the host reads them after the kernel (stream order). Triton's default,
# acq_rel, fences every add (MEMBAR.GPU, then an L1 invalidate that makes the rule's hyper
# loads miss): relaxed took the Gluon step from 0.0940 to 0.0800 ms at 4096x4096, BT 512
# (AdamW bf16; 1.01-1.23x in 8 cells, docs/perf_log.md row 15).
TELEMETRY_SEM: tl.constexpr = tl.constexpr("relaxed")


@triton.jit
def _tile_ids(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped order: GROUP_M row-tiles walk the columns together, so the dY
    # slabs they share stay in L2 while the X slabs stream.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _load_partial(accum, om, on, M, N, BLOCK_M: tl.constexpr, HALF: tl.constexpr,
                  ACCUM_BF16: tl.constexpr, TILE_TMA: tl.constexpr):
    part = load_tile(accum, om, on, M, N, BLOCK_M, HALF, TILE_TMA)
    if ACCUM_BF16:
        part = bf16_to_f32(part)
    return part


@triton.jit
def _store_partial(accum, acc, om, on, M, N, ACCUM_BF16: tl.constexpr, TILE_TMA: tl.constexpr):
    if ACCUM_BF16:
        store_tile(accum, om, on, M, N, f32_to_bf16_rne(acc), TILE_TMA)
    else:
        store_tile(accum, om, on, M, N, acc, TILE_TMA)


@triton.jit
def _apply_rule(
    acc, om, on, M, N, NB, w, master,
    s0, s0_scale_ptr, s1, s1_scale_ptr, s2, s2_scale_ptr, hyper_ptr, grad_scale_ptr,
    UPDATE: tl.constexpr, VARIANT: tl.constexpr, STATE_LOAD: tl.constexpr, STATE_STORE: tl.constexpr,
    HAS_S0: tl.constexpr, HAS_S1: tl.constexpr, HAS_S2: tl.constexpr,
    NONNEG_S0: tl.constexpr, NONNEG_S1: tl.constexpr, NONNEG_S2: tl.constexpr,
    WEIGHT_LOAD: tl.constexpr, WEIGHT_STORE: tl.constexpr, SEED_INDEX: tl.constexpr,
    HAS_GRAD_SCALE: tl.constexpr, TILE_TMA: tl.constexpr,
):
    """The epilogue on one 64-column sub-tile: load weight and state, apply the rule, store."""
    BM: tl.constexpr = acc.shape[0]
    BN: tl.constexpr = acc.shape[1]
    if HAS_GRAD_SCALE:
        acc = acc * tl.load(grad_scale_ptr)
    wt = WEIGHT_LOAD(w, master, om, on, M, N, BM, BN, TILE_TMA)
    v0 = acc
    v1 = acc
    v2 = acc
    if HAS_S0:
        v0 = STATE_LOAD(s0, s0_scale_ptr, om, on, M, N, NB, BM, BN, NONNEG_S0, TILE_TMA)
    if HAS_S1:
        v1 = STATE_LOAD(s1, s1_scale_ptr, om, on, M, N, NB, BM, BN, NONNEG_S1, TILE_TMA)
    if HAS_S2:
        v2 = STATE_LOAD(s2, s2_scale_ptr, om, on, M, N, NB, BM, BN, NONNEG_S2, TILE_TMA)
    wt, v0, v1, v2 = UPDATE(acc, wt, v0, v1, v2, load_hyper(hyper_ptr, SEED_INDEX), VARIANT)  # (the seed follows them)
    WEIGHT_STORE(w, master, om, on, M, N, wt, tl.load(hyper_ptr + SEED_INDEX).to(tl.int32), TILE_TMA)
    if HAS_S0:
        STATE_STORE(s0, s0_scale_ptr, om, on, M, N, NB, v0, NONNEG_S0, TILE_TMA)
    if HAS_S1:
        STATE_STORE(s1, s1_scale_ptr, om, on, M, N, NB, v1, NONNEG_S1, TILE_TMA)
    if HAS_S2:
        STATE_STORE(s2, s2_scale_ptr, om, on, M, N, NB, v2, NONNEG_S2, TILE_TMA)


@triton.jit
def _epilogue(
    acc_a, acc_b, om, on_a, M, N, NB, w, master,
    s0, s0_scale_ptr, s1, s1_scale_ptr, s2, s2_scale_ptr, hyper_ptr, grad_scale_ptr,
    UPDATE: tl.constexpr, VARIANT: tl.constexpr, STATE_LOAD: tl.constexpr, STATE_STORE: tl.constexpr,
    HAS_S0: tl.constexpr, HAS_S1: tl.constexpr, HAS_S2: tl.constexpr,
    NONNEG_S0: tl.constexpr, NONNEG_S1: tl.constexpr, NONNEG_S2: tl.constexpr,
    WEIGHT_LOAD: tl.constexpr, WEIGHT_STORE: tl.constexpr, SEED_INDEX: tl.constexpr,
    HAS_GRAD_SCALE: tl.constexpr, TILE_TMA: tl.constexpr, SPLIT_N: tl.constexpr, EPILOGUE_STAGES: tl.constexpr,
):
    # The column halves in one loop. Straight-line (EPILOGUE_STAGES = 1, the loop fully
    # unrolled): the second half's tiles are loaded once the first half is stored and
    # its registers are free; in Triton 3.6 each TMA load outside a pipelined loop waits
    # for its data before the next is issued. Pipelined (> 1): the loads become
    # asynchronous copies into shared memory, a half's three in flight together and the
    # second half's issued before the first half's update; both halves stay live.
    HALF: tl.constexpr = acc_a.shape[1]
    for i in tl.range(0, SPLIT_N, num_stages=EPILOGUE_STAGES,
                      loop_unroll_factor=SPLIT_N if EPILOGUE_STAGES == 1 else 1):
        _apply_rule(
            tl.where(i == 0, acc_a, acc_b), om, on_a + i * HALF, M, N, NB, w, master,
            s0, s0_scale_ptr, s1, s1_scale_ptr, s2, s2_scale_ptr, hyper_ptr, grad_scale_ptr,
            UPDATE, VARIANT, STATE_LOAD, STATE_STORE, HAS_S0, HAS_S1, HAS_S2,
            NONNEG_S0, NONNEG_S1, NONNEG_S2, WEIGHT_LOAD, WEIGHT_STORE, SEED_INDEX, HAS_GRAD_SCALE, TILE_TMA,
        )


@triton.jit
def fused_wgrad_step_kernel(
    dy, x, w, master,
    s0, s0_scale_ptr, s1, s1_scale_ptr, s2, s2_scale_ptr,
    hyper_ptr, sumsq_ptr, nonfinite_ptr, accum, grad_scale_ptr,
    w_raw, s0_raw, s1_raw, s2_raw,
    M, N, K, NB,
    stride_dyk, stride_dym, stride_xk, stride_xn,
    UPDATE: tl.constexpr, VARIANT: tl.constexpr,
    STATE_LOAD: tl.constexpr, STATE_STORE: tl.constexpr,
    HAS_S0: tl.constexpr, HAS_S1: tl.constexpr, HAS_S2: tl.constexpr,
    NONNEG_S0: tl.constexpr, NONNEG_S1: tl.constexpr, NONNEG_S2: tl.constexpr,
    WEIGHT_LOAD: tl.constexpr, WEIGHT_STORE: tl.constexpr, SEED_INDEX: tl.constexpr,
    DOT_PRECISION: tl.constexpr, WIDEN_BF16: tl.constexpr,
    MODE: tl.constexpr, HAS_ACCUM: tl.constexpr, ACCUM_BF16: tl.constexpr, HAS_GRAD_SCALE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_N: tl.constexpr, SLAB_TMA: tl.constexpr, TILE_TMA: tl.constexpr, PREFETCH: tl.constexpr,
    EPILOGUE_STAGES: tl.constexpr,
):
    # dy, x: TMA descriptors (SLAB_TMA) or plain pointers; w, master, s0..s2, accum:
    # descriptors (TILE_TMA) or pointers. w_raw (the master where there is one), s0_raw..s2_raw:
    # the same tensors as pointers, for the L2 prefetch.
    # SPLIT_N = 2 keeps the tile's two column halves in separate accumulators, so
    # the epilogue's working set (weight, states, temporaries) is half a tile.
    HALF: tl.constexpr = BLOCK_N // SPLIT_N
    pid_m, pid_n = _tile_ids(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    om = pid_m * BLOCK_M
    on_a = pid_n * BLOCK_N
    on_b = on_a + HALF
    rm = om + tl.arange(0, BLOCK_M)
    rn_a = on_a + tl.arange(0, HALF)
    rk = tl.arange(0, BLOCK_K)

    if PREFETCH and MODE == 0:
        # The epilogue's weight and state tiles travel HBM -> L2 while the main loop runs.
        prefetch_tile_l2(w_raw, om, on_a, M, N, BLOCK_M, BLOCK_N)
        state_cols = tl.where(NB == 0, N, NB * 64)  # (a block codec's codes come in whole blocks)
        if HAS_S0:
            prefetch_tile_l2(s0_raw, om, on_a, M, state_cols, BLOCK_M, BLOCK_N)
        if HAS_S1:
            prefetch_tile_l2(s1_raw, om, on_a, M, state_cols, BLOCK_M, BLOCK_N)
        if HAS_S2:
            prefetch_tile_l2(s2_raw, om, on_a, M, state_cols, BLOCK_M, BLOCK_N)

    # ---- main loop: G tile = sum over K chunks of dY_k^T X_k, fp32 ----------
    if not SLAB_TMA:
        dy_ptrs = dy + rk[:, None] * stride_dyk + rm[None, :] * stride_dym
        xa_ptrs = x + rk[:, None] * stride_xk + rn_a[None, :] * stride_xn
    acc_a = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    if HAS_ACCUM:
        # The earlier micro-batches' partial sum is where the K loop starts (not a term added
        # after it): the sum then runs in the order of one kernel over every micro-batch's
        # tokens in sequence, as it does where the tokens arrive as one batch (experts at EP>1).
        acc_a = _load_partial(accum, om, on_a, M, N, BLOCK_M, HALF, ACCUM_BF16, TILE_TMA)
        if SPLIT_N == 2:
            acc_b = _load_partial(accum, om, on_b, M, N, BLOCK_M, HALF, ACCUM_BF16, TILE_TMA)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if SLAB_TMA:
            a = dy.load([k * BLOCK_K, om])
            b = x.load([k * BLOCK_K, on_a])
        else:
            k_ok = rk[:, None] < K - k * BLOCK_K
            a = tl.load(dy_ptrs, mask=k_ok & (rm[None, :] < M), other=0.0)
            b = tl.load(xa_ptrs, mask=k_ok & (rn_a[None, :] < N), other=0.0)
        if WIDEN_BF16:
            # Triton 3.6's interpreter multiplies bf16 bit patterns as integers in
            # tl.dot; widening first is exact (bf16 products fit fp32), as on the GPU.
            a = bf16_to_f32(a)
            b = bf16_to_f32(b)
        a = tl.trans(a)
        acc_a = tl.dot(a, b, acc_a, input_precision=DOT_PRECISION)
        if SPLIT_N == 2:
            if SLAB_TMA:
                b = x.load([k * BLOCK_K, on_b])
            else:
                b = tl.load(xa_ptrs + HALF * stride_xn, mask=k_ok & (rn_a[None, :] + HALF < N), other=0.0)
            if WIDEN_BF16:
                b = bf16_to_f32(b)
            acc_b = tl.dot(a, b, acc_b, input_precision=DOT_PRECISION)
        if not SLAB_TMA:
            dy_ptrs += BLOCK_K * stride_dyk
            xa_ptrs += BLOCK_K * stride_xk

    if MODE == 2:
        tl.atomic_add(sumsq_ptr, tl.sum(tl.sum(acc_a + acc_b, axis=1), axis=0), sem=TELEMETRY_SEM)
    elif MODE == 1:
        # ---- accumulate only: an earlier micro-batch of exact accumulation ----
        _store_partial(accum, acc_a, om, on_a, M, N, ACCUM_BF16, TILE_TMA)
        if SPLIT_N == 2:
            _store_partial(accum, acc_b, om, on_b, M, N, ACCUM_BF16, TILE_TMA)
    else:
        # ---- non-finite guard: a bad tile writes nothing but its count ------
        # One reduction serves the guard and the telemetry: a NaN or Inf in G makes
        # the tile's sum of g^2 NaN or Inf (so does |g| > ~1e19, where g^2 overflows
        # fp32 -- a gradient no step should take). Out-of-bounds rows and columns
        # accumulated zeros, so they never trip it.
        sq = acc_a * acc_a
        if SPLIT_N == 2:
            sq += acc_b * acc_b
        tile_sumsq = tl.sum(tl.sum(sq, axis=1), axis=0)
        # Telemetry sees the unscaled gradient (a clipping mode needs its true norm).
        finite = tile_sumsq < float("inf")
        if not finite:
            tl.atomic_add(nonfinite_ptr, 1, sem=TELEMETRY_SEM)
        else:
            tl.atomic_add(sumsq_ptr, tile_sumsq, sem=TELEMETRY_SEM)
        if finite:
            _epilogue(
                acc_a, acc_b, om, on_a, M, N, NB, w, master,
                s0, s0_scale_ptr, s1, s1_scale_ptr, s2, s2_scale_ptr, hyper_ptr, grad_scale_ptr,
                UPDATE, VARIANT, STATE_LOAD, STATE_STORE, HAS_S0, HAS_S1, HAS_S2,
                NONNEG_S0, NONNEG_S1, NONNEG_S2, WEIGHT_LOAD, WEIGHT_STORE, SEED_INDEX, HAS_GRAD_SCALE, TILE_TMA,
                SPLIT_N, EPILOGUE_STAGES,
            )
