"""The fused kernel on the GPU: parity at real shapes (fp8 included), no recompiles
on per-step values, CUDA-graph capture, and the App. E fidelity ordering.

Run on the device machine:  python -m pytest -m gpu tests/functional -q
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import forge_mcore as fm
from forge_mcore.kernels import gluon_wgrad
from forge_mcore.kernels.configs import CANDIDATES, CONFIGS, GLUON_KERNELS, TileConfig
from forge_mcore.kernels.fused_wgrad import fused_wgrad_step_kernel
from forge_mcore.kernels.tl_bits import div_exact_by_constant, div_exact_constant_by
from tests.helpers import check_adam_at_lr_zero
from tests.unit.cases import RULE_CASES, case_id
from tests.unit.test_fused_kernel import check_states, check_weights, run_both

pytestmark = pytest.mark.gpu

# Parity does not depend on the tile config; a fixed one keeps compile time down.
FIXED = TileConfig(128, 128, 64, 8, 8, 3, split_n=2)
STEPS = 3
# The LM-head cases need several GB each (fp32 reference gradient and states): with
# ``-n N --dist loadgroup`` they share one worker instead of running out of memory side by side.
# That worker peaks above 50 GB, so an 80 GB card leaves the other workers under 30 GB (README, Tests).
REAL_SHAPES = [(4096, 4096), (12288, 4096), (4096, 12288),
               pytest.param((151936, 4096), marks=pytest.mark.xdist_group("lm_head"))]


def _run_and_check(rule, group, codec, store, shape, steps=STEPS, dtype=torch.bfloat16, grid_scale=8, config=FIXED,
                   tma_aligned=False):
    # grid_scale 8: sums of up to 4096 products of multiples of 1/8 stay exact in fp32
    w0, (w_tr, s_tr), (w_ref, s_ref), g = run_both(rule, group, codec, store, shape, steps=steps, dtype=dtype,
                                                    device="cuda", config=config, grid_scale=grid_scale,
                                                    tma_aligned=tma_aligned)
    # run_both teacher-forces on the GPU and checks every step; the final states once more:
    check_states(s_tr, s_ref, codec, 1)
    check_weights(w0, w_tr, w_ref, s_tr, s_ref, codec, store, g["lr"], steps, teacher_forced=True)


@pytest.mark.parametrize("bt", [512, 4096])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=["4096x4096", "12288x4096", "4096x12288", "151936x4096"])
@pytest.mark.parametrize("codec,store", [("bf16", "bf16"), ("int8", "bf16"), ("fp8", "bf16"),
                                         ("fp32", "fp32_master")])
def test_adamw_parity_at_real_shapes(shape, bt, codec, store):
    _run_and_check("adamw", dict(lr=1e-2, weight_decay=0.01), codec, store, (*shape, bt))


@pytest.mark.parametrize("case", RULE_CASES, ids=case_id)
def test_every_rule_on_gpu(case):
    rule, group = case
    _run_and_check(rule, group, "bf16", "bf16", (1000, 700, 333), steps=6)


@pytest.mark.parametrize("store", ["fp32", "bf16", "bf16_sr", "fp32_master"])
@pytest.mark.parametrize("codec", ["fp32", "bf16", "int8", "fp8"])
def test_every_codec_and_store_on_gpu(codec, store):
    dtype = torch.float32 if store == "fp32" else torch.bfloat16
    _run_and_check("adam", dict(lr=1e-3, amsgrad=True, weight_decay=0.01), codec, store, (1000, 700, 333),
                   steps=6, dtype=dtype)


def _config_id(c: TileConfig) -> str:
    return (f"{c.block_m}x{c.block_n}k{c.block_k}w{c.num_warps}s{c.num_stages}p{int(c.prefetch)}r{c.maxnreg}"
            f"e{c.epilogue_stages}" + ("" if c.kernel == "triton" else f"-{c.kernel}")
            + ("" if c.tile_fill == "tma" else f"-{c.tile_fill}") + ("-fastdiv" if c.fast_division else "")
            + (f"-ring{c.tile_ring}" if c.tile_ring else "")
            + (f"-after{c.first_fill_after}" if c.first_fill_after else "") + ("-serial" if c.serial_fills else "")
            + (f"-wave{c.wave_sync}" if c.wave_sync else ""))


GLUON = [c for c in CONFIGS + CANDIDATES if c.kernel != "triton"]
# TMA-aligned odd shapes (rows of 784 bf16 or int8 codes are 98 or 49 x 16 bytes; 784 columns
# end in a partial tile and a partial codec block): the Gluon kernel applies
GLUON_SHAPES = [(1000, 784, 333), (4096, 4096, 512)]


@triton.jit
def _division_mismatches(count_ptr, first, last, Q: tl.constexpr, CONSTANT_BY: tl.constexpr, BLOCK: tl.constexpr):
    bits = first + tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = bits.to(tl.uint32).to(tl.float32, bitcast=True)
    q = Q + tl.zeros_like(x)
    if CONSTANT_BY:
        got, want = div_exact_constant_by(Q, x), tl.div_rn(q, x)
    else:
        got, want = div_exact_by_constant(x, Q), tl.div_rn(x, q)
    wrong = (got.to(tl.uint32, bitcast=True) != want.to(tl.uint32, bitcast=True)) & (bits < last)
    tl.atomic_add(count_ptr, tl.sum(wrong.to(tl.int32)))


@pytest.mark.parametrize("q,constant_by", [(127.0, False), (255.0, False), (127.0, True), (255.0, True)])
def test_codec_divisions_give_div_rn_bits_for_every_operand(q, constant_by):
    # Every fp32 operand the codecs give them: x / Q for each non-negative finite x (a block's
    # absmax), Q / x for each finite x above FLUSH_BELOW (the ones not selected away).
    from forge_mcore.codecs.blockwise import FLUSH_BELOW

    first = torch.tensor(FLUSH_BELOW, dtype=torch.float32).view(torch.int32).item() + 1 if constant_by else 0
    last = 0x7F800000  # +inf, excluded
    block = 4096
    count = torch.zeros(1, dtype=torch.int32, device="cuda")
    _division_mismatches[(triton.cdiv(last - first, block),)](count, first, last, q, constant_by, block)
    assert count.item() == 0


@pytest.mark.parametrize("config", GLUON, ids=_config_id)
@pytest.mark.parametrize("codec", ["bf16", "fp32", "int8"])
def test_gluon_kernel_at_parity(config, codec):
    """Where ``gluon_wgrad.applies`` (fp32 moments do not fit beside the slab ring) the Gluon
    kernel runs; elsewhere the Triton kernel with the same geometry."""
    probe = fm.ForgeParamState.create(torch.empty(64, 128, device="cuda").bfloat16(), "adamw", {}, codec, "bf16")
    expected = gluon_wgrad.applies(config, probe, torch.empty(1, dtype=torch.bfloat16), None, True, True)
    before = fm.ops.launch_counts["gluon"]
    for shape in GLUON_SHAPES:
        _run_and_check("adamw", dict(lr=1e-2, weight_decay=0.01), codec, "bf16", shape, config=config,
                       tma_aligned=True)
    assert fm.ops.launch_counts["gluon"] - before == expected * STEPS * len(GLUON_SHAPES)


@pytest.mark.parametrize("bt", [16, 200])
def test_first_fill_waits_for_no_more_slabs_than_its_program_has(bt):
    """first_fill_after at the ring's depth where every program has one tile of fewer slabs (one at
    BT 16, four at BT 200): the first fill waits for the program's last slab, not one never loaded."""
    deep = next(c for c in GLUON if c.first_fill_after)
    config = deep.replaced(f"first_fill_after={deep.num_stages}")
    before = fm.ops.launch_counts["gluon"]
    _run_and_check("sgd", dict(lr=0.05, momentum=0.9), "bf16", "bf16", (1000, 784, bt), config=config,
                   tma_aligned=True)
    assert fm.ops.launch_counts["gluon"] - before == STEPS


@pytest.mark.parametrize("config", GLUON, ids=_config_id)
@pytest.mark.parametrize("codec", ["bf16", "int8"])
@pytest.mark.parametrize("case", RULE_CASES, ids=case_id)
def test_gluon_kernel_every_rule(case, codec, config):
    """Every rule at parity; the Gluon kernel runs it where its states fit shared memory beside
    the slab ring (three bf16 states do not), else the Triton kernel."""
    rule, group = case
    probe = fm.ForgeParamState.create(torch.empty(64, 128, device="cuda").bfloat16(), rule, group, codec, "bf16")
    expected = gluon_wgrad.applies(config, probe, torch.empty(1, dtype=torch.bfloat16), None, True, True)
    # the Gluon kernel is skipped only where its ring and tile buffers (one per consumer, or one
    # shared: epilogue_stages; tile_ring column halves) exceed shared memory
    tile_bytes = 2 + sum(s.data.element_size() for s in probe.slots if s is not None)
    halves = config.tile_ring or 2 * config.epilogue_stages
    buffers = halves * config.guard_tile[0] * config.block_n // 2 * tile_bytes
    assert expected == (config.smem_bytes(2) + buffers <= gluon_wgrad.SMEM_LIMIT)
    # one tile per program, and 3-4 (its consumers take turns); partial tiles and blocks
    shapes = [GLUON_SHAPES[0], (4096, 784, 200)]
    before = fm.ops.launch_counts["gluon"]
    for shape in shapes:
        _run_and_check(rule, group, codec, "bf16", shape, steps=4, config=config, tma_aligned=True)
    assert fm.ops.launch_counts["gluon"] - before == 4 * expected * len(shapes)


def _twin_gluon_steps(config: TileConfig, M: int, N: int, K: int, codec: str = "bf16"):
    """Two equal bf16 weights with their ``codec`` states ((weight, state) twice), a group, dY and X:
    AdamW, or Lion (one state) where AdamW's tile buffers do not fit beside the config's ring."""
    torch.manual_seed(0)
    w = (torch.randn(M, N, device="cuda") * 0.1).bfloat16()
    rule = "adamw"
    if not gluon_wgrad.applies(config, fm.ForgeParamState.create(w, rule, {}, codec, "bf16"),
                               torch.empty(1, dtype=torch.bfloat16), None, True, True):
        rule = "lion"
    twins = [(t, fm.ForgeParamState.create(t, rule, {}, codec, "bf16")) for t in (w, w.clone())]
    group = twins[0][1].rule.make_group(lr=1e-2, weight_decay=0.01)
    dy = torch.randn(K, M, device="cuda").bfloat16()
    x = torch.randn(K, N, device="cuda").bfloat16()
    return twins[0], twins[1], group, dy, x


@pytest.mark.parametrize("config", GLUON, ids=_config_id)
@pytest.mark.parametrize("codec", ["bf16", "int8"])
def test_gluon_kernel_skips_a_poisoned_tile_and_scales_the_rest(config, codec):
    """Against the Triton kernel with the same guard tile (a cooperative tile's is a consumer's
    64-row half): a NaN in one guard tile's gradient leaves its weight and state untouched and
    counted; every other tile steps with the grad scale. (Row 70 is the second 64-row block of a
    tall unit: its second pass.)"""
    # (int8 codes need rows of a multiple of 16 bytes for TMA, where the Gluon kernel applies)
    M, N, K = 1000, 784 if codec == "int8" else 776, 333
    (w, state), (ref_w, ref), group, dy, x = _twin_gluon_steps(config, M, N, K, codec)
    w0 = w.clone()
    dy[5, 70] = float("nan")  # row 70: the second 64-row tile, every column tile of it
    scale = torch.full((1,), 0.25, device="cuda")
    tel, ref_tel = fm.StepTelemetry.zeros("cuda"), fm.StepTelemetry.zeros("cuda")
    before = fm.ops.launch_counts["gluon"]
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(group), telemetry=tel, grad_scale=scale, config=config)
    assert fm.ops.launch_counts["gluon"] - before == 1
    rows_per_guard = config.guard_tile[0]
    triton_twin = TileConfig(rows_per_guard, 128, 64, config.group_m, config.num_warps, 3, split_n=2)
    fm.fused_wgrad_step(dy, x, ref_w, ref, ref.prepare_step(group), telemetry=ref_tel, grad_scale=scale,
                        config=triton_twin)
    column_tiles = -(-N // 128)
    assert tel.nonfinite_tiles.item() == ref_tel.nonfinite_tiles.item() == column_tiles
    rows = slice(64, 128) if rows_per_guard == 64 else slice(0, 128)
    assert torch.equal(w[rows], w0[rows]) and torch.equal(ref_w[rows], w0[rows])
    assert not state.slots[0].data[rows].any() and not torch.equal(w[:64], w0[:64])
    torch.testing.assert_close(w, ref_w, rtol=1e-2, atol=1e-5)
    for a, b in zip(state.slots, ref.slots):
        if a is None:
            continue
        if codec == "int8":  # the two kernels' fp32 gradients may differ in the last bit: a code step at most
            assert (a.data.int() - b.data.int()).abs().max().item() <= 1
            torch.testing.assert_close(a.scale, b.scale, rtol=1e-2, atol=1e-12)
        else:
            torch.testing.assert_close(a.data.float(), b.data.float(), rtol=1e-2, atol=1e-6)
    torch.testing.assert_close(tel.sumsq, ref_tel.sumsq, rtol=1e-4, atol=0)


@pytest.mark.parametrize("kernel", GLUON_KERNELS)
@pytest.mark.parametrize("rule", ["adam", "adamw"])
def test_gluon_adam_at_lr_zero_leaves_the_weight_unchanged(rule, kernel):
    """lr 0 (a warmup's first steps) on the first config of each Gluon kernel that takes bf16 Adam
    states: the weight keeps its bits."""
    probe = fm.ForgeParamState.create(torch.zeros(72, 192, dtype=torch.bfloat16), rule, {}, "bf16", "bf16")
    config = next(c for c in GLUON if c.kernel == kernel and gluon_wgrad.applies(
        c, probe, torch.zeros(37, 72, dtype=torch.bfloat16), None, True, True))
    before = fm.ops.launch_counts["gluon"]
    check_adam_at_lr_zero(rule, "cuda", torch.bfloat16, config)
    assert fm.ops.launch_counts["gluon"] - before == 2


@pytest.mark.parametrize("config", GLUON, ids=_config_id)
@pytest.mark.parametrize("codec", ["bf16", "int8"])
def test_main_loop_only_reduces_the_gradient_through_the_configs_own_kernel(config, codec):
    """The benchmark's main-loop arm with a Gluon config and the weight's state runs the Gluon
    kernel with its epilogue compiled out (where the step would run it): the sink is the
    gradient's sum, the weight and state keep their bits."""
    torch.manual_seed(0)
    for M, N, K in GLUON_SHAPES:
        w = (torch.randn(M, N, device="cuda") * 0.1).bfloat16()
        state = fm.ForgeParamState.create(w, "adamw", {}, codec, "bf16")
        state.slots[0].data.copy_(torch.randint_like(state.slots[0].data, 0, 100))
        saved = [t.clone() for t in (w, *(s.data for s in state.slots if s is not None))]
        dy = torch.randn(K, M, device="cuda").bfloat16()
        x = torch.randn(K, N, device="cuda").bfloat16()
        expected = gluon_wgrad.applies(config, state, dy, None, True, True)
        sink = torch.zeros(1, device="cuda")
        before = fm.ops.launch_counts["gluon"]
        fm.ops.wgrad_mainloop(dy, x, w, sink=sink, config=config, state=state)
        assert fm.ops.launch_counts["gluon"] - before == expected
        g = dy.float().t() @ x.float()
        assert abs(sink.item() - g.sum().item()) <= 1e-4 * g.abs().sum().item()
        for before_t, after_t in zip(saved, (w, *(s.data for s in state.slots if s is not None))):
            assert torch.equal(before_t, after_t)


@pytest.mark.parametrize("config", GLUON, ids=_config_id)
def test_traced_gluon_step_equals_the_untraced_one_and_stamps_every_unit(config):
    """The phase stamps (``bench/timeline``) change no bit of the step, and every unit a consumer
    ran has its stamps in phase order."""
    M, N, K = 4096, 4096, 512
    (w, state), (traced_w, traced), group, dy, x = _twin_gluon_steps(config, M, N, K)
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(group), config=config)
    trace = gluon_wgrad.trace_buffer(config, M, N, w.device)
    tel = fm.StepTelemetry.zeros("cuda")
    gluon_wgrad.launch(config, dy, x, traced_w, traced, traced.slot_tensors, traced.prepare_step(group), tel.sumsq,
                       tel.nonfinite_tiles, None, None, trace=trace)
    assert torch.equal(w, traced_w)
    for a, b in zip(state.slots, traced.slots):
        assert (a is None) == (b is None) and (a is None or torch.equal(a.data, b.data))
    ran = trace[..., 0] > 0
    assert int(ran.sum()) == config.units_per_tile * (M // config.block_m) * (N // config.block_n)  # every unit, once
    stamps = trace[ran][:, :5]  # (the cooperative schedule has no release stamp)
    assert bool((stamps[:, 1:] >= stamps[:, :-1]).all())


@pytest.mark.parametrize("config", CONFIGS + CANDIDATES, ids=_config_id)
@pytest.mark.parametrize("codec,store", [("bf16", "bf16"), ("int8", "bf16"), ("fp8", "bf16"), ("fp32", "fp32_master")])
def test_every_tile_config(config, codec, store):
    """Every tile config the tuner may pick, and those under evaluation, at parity."""
    _run_and_check("adam", dict(lr=1e-3, amsgrad=True, weight_decay=0.01), codec, store, (1000, 700, 333),
                   config=config)
    _run_and_check("adamw", dict(lr=1e-2, weight_decay=0.01), codec, store, (4096, 4096, 512), config=config)


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_accumulated_step_sums_in_one_batchs_order(config):
    """Micro-batches split where a K block ends give the bits of one launch over all their
    tokens, with wgmma's own summation (the EP>1 expert cell of [mcore] relies on it)."""
    gen = torch.Generator(device="cuda").manual_seed(3)
    out_f, in_f, k1, k2 = 1024, 4096, 1024, 512 + 64

    def randn(*shape):
        return torch.randn(*shape, generator=gen, device="cuda").to(torch.bfloat16)

    dy1, x1, dy2, x2 = randn(k1, out_f), randn(k1, in_f), randn(k2, out_f), randn(k2, in_f)
    w0 = randn(out_f, in_f)
    runs = []
    for split in (True, False):
        w = w0.clone()
        state = fm.ForgeParamState.create(w, "adamw", dict(lr=1e-3), "bf16", "bf16")
        hyper = state.prepare_step(state.rule.make_group(lr=1e-3))
        if split:
            buf = torch.zeros(out_f, in_f, device="cuda")
            fm.accumulate_wgrad(dy1, x1, buf, config=config)
            fm.fused_wgrad_step(dy2, x2, w, state, hyper, accumulated=buf, config=config)
        else:
            fm.fused_wgrad_step(torch.cat([dy1, dy2]), torch.cat([x1, x2]), w, state, hyper, config=config)
        runs.append([w] + [s.data for s in state.slots if s is not None])
    for a, b in zip(*runs):
        assert torch.equal(a, b), f"{config}: max |diff| {(a.float() - b.float()).abs().max().item():.3g}"


def _compiled_kernels() -> int:
    kernels = (fused_wgrad_step_kernel, gluon_wgrad.gluon_ws_fused_step_kernel)
    return sum(len(cache[0]) for kernel in kernels for cache in kernel.device_caches.values())


def test_lr_schedule_never_recompiles():
    w = torch.randn(4096, 4096, device="cuda").bfloat16()
    state = fm.ForgeParamState.create(w, "adamw", {}, "bf16", "bf16")
    g = state.rule.make_group()
    dy = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g))  # tunes and compiles
    compiled, tuned = _compiled_kernels(), len(fm.ops.tuned_configs())
    gluon_direct = gluon_wgrad._launcher()
    direct, gluon = fm.ops._direct_launcher().direct_launches, gluon_direct.direct_launches
    for step in range(100):
        g["lr"] = 1e-3 * (step % 10 + 1) / 10
        g["weight_decay"] = 0.01 * (step % 3)
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g))
    torch.cuda.synchronize()
    assert _compiled_kernels() == compiled
    assert len(fm.ops.tuned_configs()) == tuned
    # no JITFunction.run after the first launch, whichever kernel was tuned in
    launched = (fm.ops._direct_launcher().direct_launches - direct, gluon_direct.direct_launches - gluon)
    assert launched in ((100, 0), (0, 100)), launched


def _state_tensors(w, state):
    tensors = [w] + [t for s in state.slots if s is not None for t in (s.data, s.scale) if t is not None]
    return [t.view(torch.uint8) for t in tensors]


WS = next(c for c in CONFIGS + CANDIDATES if c.kernel == "gluon_ws")


@pytest.mark.parametrize("codec,config", [("bf16", None), ("int8", None), ("bf16", WS)],
                         ids=["bf16", "int8", "gluon_ws"])
@pytest.mark.parametrize("scaled", [False, True])
def test_replayed_steps_equal_full_steps(monkeypatch, codec, config, scaled):
    """The engine's repeated call (same weight, scalars, telemetry; dY/X of one layout) goes
    through ``ops._Replay`` from its third step on; with fresh dY/X (new addresses) every
    step it must write exactly what the full launch path writes. ``config``: the tuner's
    choice (None), or the Gluon kernel as if it were tuned in."""
    if config is not None:
        monkeypatch.setattr(fm.ops, "_select_config", lambda *args: config)
    gluon = fm.ops.launch_counts["gluon"]
    torch.manual_seed(0)
    w = (torch.randn(1536, 1024, device="cuda") * 0.1).bfloat16()
    ref_w = w.clone()
    state, ref = (fm.ForgeParamState.create(t, "adamw", {}, codec, "bf16", seed=1) for t in (w, ref_w))
    group = state.rule.make_group(lr=1e-2, weight_decay=0.01)
    tel, ref_tel = fm.StepTelemetry.zeros("cuda"), fm.StepTelemetry.zeros("cuda")
    replays, steps = fm.ops.launch_counts["replay"], 6
    for step in range(steps):
        dy = torch.randn(2, 300, 1536, device="cuda").bfloat16()
        x = torch.randn(2, 300, 1024, device="cuda").bfloat16()
        scale = torch.full((1,), 0.5 + step / 10, device="cuda") if scaled else None
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(group), telemetry=tel, grad_scale=scale)
        with monkeypatch.context() as m:  # an observer forces the full path
            m.setattr(fm.ops, "launch_observer", lambda *args: None)
            fm.fused_wgrad_step(dy, x, ref_w, ref, ref.prepare_step(group), telemetry=ref_tel, grad_scale=scale)
        assert all(torch.equal(a, b) for a, b in zip(_state_tensors(w, state), _state_tensors(ref_w, ref))), step
    assert torch.allclose(tel.sumsq, ref_tel.sumsq, rtol=1e-5)  # tiles add their sum of squares in any order
    # step 2 binds (step 1's layout again, launched directly once step 1 compiled); later steps replay
    assert fm.ops.launch_counts["replay"] - replays >= steps - 2
    if config is not None:  # the reference's full launches (and the replayed weight's first two) took it
        assert fm.ops.launch_counts["gluon"] - gluon >= steps + 2


@pytest.mark.parametrize("wait", [1, 200000])  # every wait timing out (no more waits after round 1); none
@pytest.mark.parametrize("kernel", ["gluon_ws", "gluon_coop_tall"])
def test_wave_sync_changes_no_bit_and_counts_every_launchs_arrivals(kernel, wait, monkeypatch):
    """``TileConfig.wave_sync``: programs that wait for each other at every round of tiles (three
    rounds here: more tiles than SMs) write what programs that do not write, launched eagerly and
    replayed in a CUDA graph, and every launch adds one arrival per tile to the weight's counter
    (``gluon_wgrad._wave_wait``: each launch finds its start at a multiple of the tile count; a lost
    or extra arrival would shift every later launch's rounds: no error, only no sync)."""
    plain = next(c for c in GLUON if c.kernel == kernel).replaced("wave_sync=0")
    synced = plain.replaced(f"wave_sync={wait}")
    counters = {}
    wave_counter = gluon_wgrad._wave_counter
    monkeypatch.setattr(gluon_wgrad, "_wave_counter",
                        lambda *a: counters.setdefault(id(c := wave_counter(*a)), c))
    sms = gluon_wgrad._sm_count(torch.cuda.current_device())
    rows, cols = 2 * plain.block_m * -(-sms // 16), 16 * plain.block_n
    tiles = rows // plain.block_m * 16
    assert tiles > 2 * sms
    torch.manual_seed(0)
    w0 = (torch.randn(rows, cols, device="cuda") * 0.1).bfloat16()
    dy, x = torch.randn(256, rows, device="cuda").bfloat16(), torch.randn(256, cols, device="cuda").bfloat16()

    def weight_and_state():
        w = w0.clone()
        state = fm.ForgeParamState.create(w, "adamw", {}, "int8", "bf16")
        return w, state, state.prepare_step(state.rule.make_group(lr=1e-2, weight_decay=0.01))

    (w_ref, ref, ref_hyper), (w, state, hyper) = weight_and_state(), weight_and_state()
    gluon = fm.ops.launch_counts["gluon"]
    for _ in range(3):
        fm.fused_wgrad_step(dy, x, w_ref, ref, ref_hyper, config=plain)
        fm.fused_wgrad_step(dy, x, w, state, hyper, config=synced)
        assert all(torch.equal(a, b) for a, b in zip(_state_tensors(w, state), _state_tensors(w_ref, ref)))
    captured = torch.cuda.CUDAGraph()
    with torch.cuda.graph(captured):
        for _ in range(2):
            fm.fused_wgrad_step(dy, x, w, state, hyper, config=synced)
    for _ in range(2):
        captured.replay()
        for _ in range(2):
            fm.fused_wgrad_step(dy, x, w_ref, ref, ref_hyper, config=plain)
    torch.cuda.synchronize()
    assert all(torch.equal(a, b) for a, b in zip(_state_tensors(w, state), _state_tensors(w_ref, ref)))
    assert fm.ops.launch_counts["gluon"] - gluon >= 6 and counters, "the Gluon kernel did not run with wave_sync"
    assert sum(int(c.item()) for c in counters.values()) == 7 * tiles, [c.item() for c in counters.values()]


def test_back_to_back_gluon_steps_see_each_others_writes(monkeypatch):
    """Launched as a programmatic dependent launch (``gluon_wgrad.PDL``), a step may start while
    the previous kernel still runs; each of its partitions waits for that kernel before touching
    memory. Eight steps of one weight launched back to back (each reads the weight and states the
    last one wrote; a torch kernel rewrites dY before every other one), eagerly and in one CUDA
    graph, write what the same steps write with a synchronize after every kernel."""
    assert gluon_wgrad.PDL, "run with FORGE_PDL unset: this test is about the PDL launch"
    monkeypatch.setattr(fm.ops, "_select_config", lambda *args: WS)
    torch.manual_seed(0)
    w0 = (torch.randn(1024, 4096, device="cuda") * 0.1).bfloat16()
    dy0 = torch.randn(512, 1024, device="cuda").bfloat16()
    x = torch.randn(512, 4096, device="cuda").bfloat16()

    def run(sync: bool, graph: bool) -> list[torch.Tensor]:
        w, dy = w0.clone(), dy0.clone()
        state = fm.ForgeParamState.create(w, "adamw", {}, "bf16", "bf16")
        hyper = state.prepare_step(state.rule.make_group(lr=1e-2, weight_decay=0.01))
        fm.fused_wgrad_step(dy, x, w, state, hyper)  # compiled (and bound) outside any capture
        torch.cuda.synchronize()
        gluon = fm.ops.launch_counts["gluon"]

        def steps():
            for i in range(8):
                if i % 2:
                    dy.mul_(-0.5)
                    if sync:
                        torch.cuda.synchronize()
                fm.fused_wgrad_step(dy, x, w, state, hyper)
                if sync:
                    torch.cuda.synchronize()

        if graph:
            captured = torch.cuda.CUDAGraph()
            with torch.cuda.graph(captured):
                steps()
            captured.replay()
        else:
            steps()
        torch.cuda.synchronize()
        assert fm.ops.launch_counts["gluon"] > gluon, "the Gluon kernel did not run"
        return _state_tensors(w, state)

    reference = run(sync=True, graph=False)
    for graph in (False, True):
        assert all(torch.equal(a, b) for a, b in zip(run(sync=False, graph=graph), reference)), graph


def test_fused_step_captures_in_a_cuda_graph():
    w = torch.randn(1024, 768, device="cuda").bfloat16()
    ref_w = w.clone()
    state = fm.ForgeParamState.create(w, "adamw", {}, "int8", "bf16")
    ref_state = fm.ForgeParamState.create(ref_w, "adamw", {}, "int8", "bf16")
    g = state.rule.make_group(lr=1e-2)
    dy = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(256, 768, device="cuda", dtype=torch.bfloat16)
    tel = fm.StepTelemetry.zeros("cuda")
    hyper = state.prepare_step(g)
    fm.fused_wgrad_step(dy, x, w, state, hyper, telemetry=tel, config=FIXED)  # warm up outside capture
    fm.fused_wgrad_step(dy, x, ref_w, ref_state, ref_state.prepare_step(g), config=FIXED)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fm.fused_wgrad_step(dy, x, w, state, hyper, telemetry=tel, config=FIXED)
    for step in range(3):  # the schedule changes lr between replays: no recapture needed
        g["lr"] = 1e-2 / (step + 2)
        state.prepare_step(g)  # refreshes the same device buffer the graph reads
        graph.replay()
        fm.fused_wgrad_step(dy, x, ref_w, ref_state, ref_state.prepare_step(g), config=FIXED)
    torch.cuda.synchronize()
    assert torch.equal(w, ref_w), "graph replays diverged from eager launches"


def test_fidelity_ordering_matches_paper_appendix_e():
    from forge_mcore.bench.fidelity import run

    rows = {r["arm"]: r["rms_rel"] for r in run()}
    assert rows["forge bf16"] <= rows["standard bf16"], rows
    assert rows["forge fp32-master"] < rows["standard fp32-master"], rows
    assert rows["forge int8"] <= 5 * rows["standard bf16"], rows
