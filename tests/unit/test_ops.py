"""The launcher: backend choice, validation before writes, the non-finite guard,
no recompiles on per-step values, accumulation, gradient scale, odd operands."""

from __future__ import annotations

import pytest
import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.kernels.configs import TileConfig
from tests.helpers import assert_close_verbose, grid_tensor

BACKENDS = ["triton", "torch"]
M, N, K = 130, 200, 9  # 5 x 4 tiles of 32 x 64 under the interpreter


def _setup(rule="adamw", codec="int8", store="fp32", group=None, seed=0):
    gen = torch.Generator().manual_seed(seed)
    wdtype = torch.float32 if store == "fp32" else torch.bfloat16
    w = (torch.randn(M, N, generator=gen) * 0.5).to(wdtype)
    state = fm.ForgeParamState.create(w, rule, group or {"lr": 0.01}, codec, store)
    return w, state, state.rule.make_group(**(group or {"lr": 0.01})), gen


def _snapshot(w, state):
    tensors = [w.clone()] + ([state.master.clone()] if state.master is not None else [])
    for s in state.slots:
        if s is not None:
            tensors += [s.data.clone()] + ([s.scale.clone()] if s.scale is not None else [])
    return tensors


def _unchanged(w, state, snap):
    return all(torch.equal(a.view(torch.uint8) if a.element_size() == 1 else a,
                           b.view(torch.uint8) if b.element_size() == 1 else b)
               for a, b in zip(_snapshot(w, state), snap))


def test_backend_resolution_and_launch_counts():
    assert ops.resolve_backend(torch.device("cpu")) == "torch"
    assert ops.resolve_backend(torch.device("cpu"), "triton") == "triton"  # TRITON_INTERPRET=1 here
    with pytest.raises(ValueError, match="backend"):
        ops.resolve_backend(torch.device("cpu"), "cuda")
    w, state, g, gen = _setup()
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    before = dict(ops.launch_counts)
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), backend="triton")
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g))
    assert ops.launch_counts["triton"] == before.get("triton", 0) + 1
    assert ops.launch_counts["torch"] == before.get("torch", 0) + 1


def test_triton_on_cpu_without_interpreter_is_refused(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(ValueError, match="TRITON_INTERPRET=1"):
        ops.resolve_backend(torch.device("cpu"), "triton")


def _bad_calls(w, state, hyper, dy, x):
    meta = torch.empty(K, N, device="meta")
    return [
        ("grad_output", dict(grad_output=dy[:, :-1])),
        ("in_features", dict(input=x[:, :-1])),
        ("token axes", dict(input=x[:-1])),
        ("float16", dict(grad_output=dy.half(), input=x.half())),
        ("share a dtype", dict(input=x.bfloat16())),
        ("on meta", dict(input=meta)),
        ("hyper", dict(hyper=hyper[:-1])),
        ("hyper", dict(hyper=hyper.double())),
        ("contiguous", dict(weight=w.t().contiguous().t())),
        ("weight_store", dict(weight=w.bfloat16())),
        ("ForgeParamState", dict(state=object())),
        ("accumulated", dict(accumulated=torch.zeros(M, N + 1))),
        ("accumulated", dict(accumulated=torch.zeros(M, N, dtype=torch.float16))),
        ("grad_scale", dict(grad_scale=torch.ones(2))),
        ("grad_scale must be a 1-element float32", dict(grad_scale=torch.ones(1, dtype=torch.float64))),
        ("grad_scale must be a 1-element float32 tensor on cpu", dict(grad_scale=torch.ones(1, device="meta"))),
        ("telemetry.nonfinite_tiles", dict(telemetry=fm.StepTelemetry(torch.zeros(1),
                                                                       torch.zeros(1, dtype=torch.int64)))),
        ("telemetry.sumsq", dict(telemetry=fm.StepTelemetry(torch.zeros(1, dtype=torch.float64),
                                                            torch.zeros(1, dtype=torch.int32)))),
        ("telemetry must be a StepTelemetry", dict(telemetry=(torch.zeros(1), torch.zeros(1, dtype=torch.int32)))),
        ("config must be a TileConfig", dict(config="fast")),
        ("before any state.prepare_step", dict(state=(fresh := fm.ForgeParamState.create(w, "adamw")),
                                                hyper=fresh.hyper_buffer)),
        (rf"state was created for a \({M}, {N}\) weight", dict(weight=torch.zeros(M, N - 1), input=x[:, :-1])),
        ("accumulated must be a contiguous .* got a non-contiguous", dict(accumulated=torch.zeros(N, M).t())),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input_raises_before_any_write(backend):
    w, state, g, gen = _setup()
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    hyper = state.prepare_step(g)
    snap = _snapshot(w, state)
    for match, override in _bad_calls(w, state, hyper, dy, x):
        kwargs = dict(grad_output=dy, input=x, weight=w, state=state, hyper=hyper)
        kwargs.update(override)
        with pytest.raises((ValueError, TypeError), match=match):
            fm.fused_wgrad_step(backend=backend, **kwargs)
        assert _unchanged(w, state, snap), f"a rejected call ({match}) wrote something"


def test_bad_configuration_raises():
    w = torch.zeros(4, 8)
    with pytest.raises(ValueError, match="unknown rule"):
        fm.ForgeParamState.create(w, "adafactor")
    with pytest.raises(ValueError, match="state_dtype"):
        fm.ForgeParamState.create(w, "adamw", state_dtype="int4")
    with pytest.raises(ValueError, match="weight_store"):
        fm.ForgeParamState.create(w, "adamw", weight_store="fp8")
    with pytest.raises(TypeError, match="fp16"):
        fm.ForgeParamState.create(w.half(), "adamw")
    with pytest.raises(TypeError, match="needs a torch.bfloat16 weight"):
        fm.ForgeParamState.create(w, "adamw", weight_store="fp32_master")
    with pytest.raises(ValueError, match="2-D"):
        fm.ForgeParamState.create(torch.zeros(8), "adamw")
    with pytest.raises(ValueError, match=r"\(0, 5\) has no elements"):
        fm.ForgeParamState.create(torch.zeros(0, 5), "adamw")
    with pytest.raises(ValueError, match=r"lacks \['amsgrad', 'betas', 'eps', 'weight_decay'\].*make_group"):
        fm.ForgeParamState.create(w, "adamw").prepare_step({"lr": 1e-3})
    with pytest.raises(ValueError, match=r"input has 9 features, buffer has in_features=8"):
        fm.accumulate_wgrad(torch.zeros(3, 4), torch.zeros(3, 9), torch.zeros(4, 8))
    stateless = fm.ForgeParamState.create(w.bfloat16(), "sgd", weight_store="fp32_master")  # no momentum: no slots
    with pytest.raises(ValueError, match=r"row_view\(2, 100\).*4-row weight"):
        stateless.row_view(2, 100)
    assert stateless.row_view(1, 3).weight_shape == (2, 8)


@pytest.mark.parametrize("broken", ["step", "scalars", "base_seed", "wrong codes"])
def test_a_state_dict_is_checked_whole_before_anything_is_loaded(broken):
    w, state, g, gen = _setup()
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g))
    saved = state.state_dict()
    if broken == "wrong codes":
        saved["states"] = {**saved["states"], "exp_avg_sq": {"data": torch.zeros(3, 3, dtype=torch.uint8),
                                                             "scale": saved["states"]["exp_avg_sq"]["scale"]}}
    else:
        del saved[broken]
    fresh = fm.ForgeParamState.create(torch.zeros(M, N), "adamw", {"lr": 0.01}, "int8")
    snap = _snapshot(torch.zeros(M, N), fresh)
    with pytest.raises(ValueError, match="state_dict"):
        fresh.load_state_dict(saved)
    assert _unchanged(torch.zeros(M, N), fresh, snap) and fresh.step == 0


def _poison_one_element(dy, x, m0, n0, kind):
    """Make G[m0, n0] (and nothing else) non-finite using two token rows."""
    big = 2.0**100
    dy[:2] = 0
    x[:2] = 0
    dy[0, m0], x[0, n0] = big, big  # 2^200 overflows fp32: +inf
    if kind == "nan":
        dy[1, m0], x[1, n0] = -big, big  # inf + (-inf) = nan


TILES = [TileConfig(32, 64, 16, 2, 1, 1), TileConfig(32, 128, 16, 2, 1, 1, split_n=2),
         # where its Gluon kernel does not run (here: the interpreter), a cooperative config runs the
         # Triton kernel on its guard tile, a 64-row half, as the Gluon kernel guards it
         TileConfig(128, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_coop")]


@pytest.mark.parametrize("tile", TILES, ids=["32x64", "32x128-split", "coop"])
@pytest.mark.parametrize("kind", ["inf", "nan"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_one_poisoned_tile_is_skipped_and_all_others_update(backend, kind, tile):
    w, state, g, gen = _setup("adamw", "int8", "fp32", {"lr": 0.01, "weight_decay": 0.1})
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    m0, n0 = 70, 100  # in tile (2, 1) of a 32 x 64 grid, tile (2, 0) of a 32 x 128 grid
    _poison_one_element(dy, x, m0, n0, kind)
    before = _snapshot(w, state)
    tel = fm.StepTelemetry.zeros("cpu")
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), telemetry=tel, backend=backend, config=tile)
    assert tel.nonfinite_tiles.item() == 1
    bm, bn = tile.guard_tile
    r0, c0 = m0 // bm * bm, n0 // bn * bn
    rows, cols = slice(r0, r0 + bm), slice(c0, c0 + bn)
    in_tile = torch.zeros(M, N, dtype=torch.bool)
    in_tile[rows, cols] = True
    after = _snapshot(w, state)
    for old, new in zip(before[:1], after[:1]):  # the weight: every element outside the tile moved
        assert torch.equal(new[in_tile], old[in_tile]), "the poisoned tile's weight changed"
        assert (new[~in_tile] != old[~in_tile]).all(), "a healthy tile was not updated"
    for s, old_slot in zip([s for s in state.slots if s is not None], _pairs(before[1:])):
        assert torch.equal(s.data[rows, cols].view(torch.uint8), old_slot[0][rows, cols].view(torch.uint8))
        blocks = slice(c0 // 64, (c0 + bn) // 64)
        assert torch.equal(s.scale[rows, blocks], old_slot[1][rows, blocks]), "the poisoned tile's scales changed"
    g_ref = ops.reference_gradient(dy, x)
    g_ref[rows, cols] = 0
    assert abs(tel.sumsq.item() - float(g_ref.double().pow(2).sum())) <= 1e-5 * float(g_ref.double().pow(2).sum())


@pytest.mark.parametrize("tile", TILES[:2], ids=["32x64", "32x128-split"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_poisoned_tile_is_counted_and_skipped(backend, tile):
    """Rows {5, 129} x columns {10, 199} poison four tiles (the last, partial ones included): the count is
    four, not one per step, and exactly those tiles keep their weight and fp32 master bit for bit."""
    w, state, g, gen = _setup("adamw", "fp32", "fp32_master", {"lr": 0.01, "weight_decay": 0.1})
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    dy[:1], x[:1] = 0, 0
    for m in (5, 129):
        dy[0, m] = 2.0**100
    for n in (10, 199):
        x[0, n] = 2.0**100
    w_before, master_before = w.clone(), state.master.clone()
    tel = fm.StepTelemetry.zeros("cpu")
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), telemetry=tel, backend=backend, config=tile)
    assert tel.nonfinite_tiles.item() == 4, "each skipped tile counts once"
    bm, bn = tile.guard_tile
    skipped = torch.zeros(M, N, dtype=torch.bool)
    for m in (5, 129):
        for n in (10, 199):
            skipped[m // bm * bm:(m // bm + 1) * bm, n // bn * bn:(n // bn + 1) * bn] = True
    for name, old, new in (("weight", w_before, w), ("master", master_before, state.master)):
        assert torch.equal(new[skipped], old[skipped]), f"a skipped tile's {name} changed"
    # (the bf16 weight may round back to where it was; its fp32 master always moves)
    assert (state.master[~skipped] != master_before[~skipped]).all(), "a healthy tile was not updated"
    g_ref = ops.reference_gradient(dy, x)
    g_ref[skipped] = 0
    expected = float(g_ref.double().pow(2).sum())
    assert abs(tel.sumsq.item() - expected) <= 1e-5 * expected


def _pairs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


@pytest.mark.parametrize("cols,tma", [(70, False), (192, True)])
def test_tile_path_follows_alignment(monkeypatch, cols, tma):
    seen = []
    monkeypatch.setattr(ops, "launch_observer", lambda cfg, args, cx: seen.append((cx["SLAB_TMA"], cx["TILE_TMA"])))
    w = torch.randn(72, cols)
    state = fm.ForgeParamState.create(w, "adamw", {}, "bf16")
    dy, x = torch.randn(5, 72), torch.randn(5, cols)
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(state.rule.make_group()), backend="triton")
    monkeypatch.setenv("FORGE_TMA", "0")
    fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(state.rule.make_group()), backend="triton")
    assert seen == [(tma, tma), (False, False)]


def test_changing_lr_never_changes_the_kernel_specialization(monkeypatch):
    seen = set()
    monkeypatch.setattr(ops, "launch_observer", lambda cfg, args, cx: seen.add((cfg, args, tuple(sorted(
        (k, id(v) if callable(v) else v) for k, v in cx.items())))))
    w, state, g, gen = _setup("adamw", "bf16", "bf16")
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    tuned = len(ops.tuned_configs())
    for step in range(21):  # every (step % 7, step % 3) pair, a new lr at each step, weight decay 0 included
        g["lr"] = 1e-3 * (1 + step % 7) / (1 + step)
        g["weight_decay"] = 0.01 * (step % 3)
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), backend="triton")
    assert len(seen) == 1, f"{len(seen)} distinct kernel specializations for one shape"
    assert len(ops.tuned_configs()) == tuned


@pytest.mark.parametrize("buffer_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("backend", BACKENDS)
def test_accumulate_then_step_equals_one_batch(backend, buffer_dtype):
    gen = torch.Generator().manual_seed(5)
    parts = [(grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)) for _ in range(3)]
    buf = torch.zeros(M, N, dtype=buffer_dtype)
    for dy, x in parts[:2]:
        fm.accumulate_wgrad(dy, x, buf, backend=backend)
    g12 = ops.reference_gradient(parts[0][0], parts[0][1]) + ops.reference_gradient(parts[1][0], parts[1][1])
    if buffer_dtype == torch.bfloat16:  # two roundings, each half an ulp of a partial sum
        assert_close_verbose(buf.float(), g12, rtol=0, atol=2**-7 * g12.abs().max().item(), what="bf16 buffer")
    else:
        assert_close_verbose(buf, g12, rtol=1e-6, atol=1e-6, what="fp32 buffer")
    w_a, s_a, g, _ = _setup("adamw", "fp32", "fp32")
    w_b, s_b, _, _ = _setup("adamw", "fp32", "fp32")
    fm.fused_wgrad_step(parts[2][0], parts[2][1], w_a, s_a, s_a.prepare_step(g), accumulated=buf, backend=backend)
    big_dy = torch.cat([p[0] for p in parts])
    big_x = torch.cat([p[1] for p in parts])
    if buffer_dtype == torch.bfloat16:  # the buffer's rounding is the only difference allowed
        big_dy, big_x = parts[2][0], parts[2][1]
        fm.fused_wgrad_step(big_dy, big_x, w_b, s_b, s_b.prepare_step(g), accumulated=buf.float(), backend="torch")
    else:
        fm.fused_wgrad_step(big_dy, big_x, w_b, s_b, s_b.prepare_step(g), backend="torch")
    assert_close_verbose(w_a, w_b, rtol=1e-6, atol=1e-7, what="accumulated step")


def test_accumulated_step_sums_in_one_batchs_order():
    """The partial sum starts the K loop: split where a block of K ends, the micro-batches give
    the bits one launch over all their tokens gives (what EP>1 expert layers see)."""
    gen = torch.Generator().manual_seed(11)
    block_k = ops.INTERPRETER_CONFIG.block_k
    dy1, x1 = torch.randn(2 * block_k, M, generator=gen), torch.randn(2 * block_k, N, generator=gen)
    dy2, x2 = torch.randn(block_k + 9, M, generator=gen), torch.randn(block_k + 9, N, generator=gen)
    w_a, s_a, g, _ = _setup("adamw", "fp32", "fp32")
    w_b, s_b, _, _ = _setup("adamw", "fp32", "fp32")
    buf = torch.zeros(M, N)
    fm.accumulate_wgrad(dy1, x1, buf, backend="triton")
    fm.fused_wgrad_step(dy2, x2, w_a, s_a, s_a.prepare_step(g), accumulated=buf, backend="triton")
    fm.fused_wgrad_step(torch.cat([dy1, dy2]), torch.cat([x1, x2]), w_b, s_b, s_b.prepare_step(g), backend="triton")
    for a, b in zip(_snapshot(w_a, s_a), _snapshot(w_b, s_b)):
        assert torch.equal(a, b), f"max |diff| {(a - b).abs().max().item():.3g}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_scale_scales_the_gradient_not_the_telemetry(backend):
    w_a, s_a, g, gen = _setup("sgd", "fp32", "fp32", {"lr": 0.1})
    w_b, s_b, _, _ = _setup("sgd", "fp32", "fp32", {"lr": 0.1})
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    tel = fm.StepTelemetry.zeros("cpu")
    fm.fused_wgrad_step(dy, x, w_a, s_a, s_a.prepare_step(g), grad_scale=torch.tensor([0.25]),
                        telemetry=tel, backend=backend)
    fm.fused_wgrad_step(dy * 0.25, x, w_b, s_b, s_b.prepare_step(g), backend="torch")
    assert_close_verbose(w_a, w_b, rtol=1e-6, atol=1e-7, what="scaled step")
    expected = float(ops.reference_gradient(dy, x).double().pow(2).sum())
    assert abs(tel.sumsq.item() - expected) <= 1e-5 * expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_odd_operands(backend):
    """Strided and transposed dY/X, 3-D token axes, zero tokens (a gradient-free step)."""
    w_a, s_a, g, gen = _setup("adamw", "fp32", "fp32")
    w_b, s_b, _, _ = _setup("adamw", "fp32", "fp32")
    dy = grid_tensor(M, 2 * K, generator=gen).t()[::2]  # (K, M), non-contiguous both ways
    x = grid_tensor(N, 2 * K, generator=gen).t()[1::2]
    fm.fused_wgrad_step(dy, x, w_a, s_a, s_a.prepare_step(g), backend=backend)
    fm.fused_wgrad_step(dy.contiguous().view(1, K, M), x.contiguous().view(1, K, N), w_b, s_b,
                        s_b.prepare_step(g), backend="torch")
    assert_close_verbose(w_a, w_b, rtol=1e-6, atol=1e-7, what="strided operands")
    before = w_a.clone()
    empty_dy, empty_x = torch.empty(0, M), torch.empty(0, N)
    fm.fused_wgrad_step(empty_dy, empty_x, w_a, s_a, s_a.prepare_step(g), backend=backend)
    assert torch.isfinite(w_a).all() and not torch.equal(w_a, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stochastic_rounding_store_is_unbiased_without_dead_zone(backend):
    """paper N.7 gate SR: w = 1 + ulp/4 after SGD; RNE would never move it."""
    ulp = 2.0**-7
    rows, cols = 256, 512
    w = torch.ones(rows, cols, dtype=torch.bfloat16)
    state = fm.ForgeParamState.create(w, "sgd", {"lr": 1.0}, "fp32", "bf16_sr")
    g = state.rule.make_group(lr=1.0)
    dy = torch.full((1, rows), -ulp / 4)
    x = torch.ones(1, cols)
    means = []
    for _ in range(4):  # four quarter-ulp steps: the mean must follow 1 + k ulp/4
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), backend=backend)
        means.append(w.float().mean().item())
    for k, m in enumerate(means, start=1):
        assert abs(m - (1 + k * ulp / 4)) < 0.03 * ulp, f"step {k}: mean {m} is biased"
    assert set(w.float().unique().tolist()) <= {1.0, 1.0 + ulp, 1.0 + 2 * ulp, 1.0 + 3 * ulp, 1.0 + 4 * ulp}


def test_no_tokens_applies_the_gradient_free_update():
    """BT = 0 (an expert no token was routed to): G = 0, so only weight decay and the
    moments' decay act (paper Remark 1), on the TMA-eligible shape too."""
    gen = torch.Generator().manual_seed(3)
    w = torch.randn(72, 192, generator=gen)
    w_ref = w.clone()
    s_tr = fm.ForgeParamState.create(w, "adamw", dict(weight_decay=0.1), "fp32", "fp32")
    s_ref = fm.ForgeParamState.create(w_ref, "adamw", dict(weight_decay=0.1), "fp32", "fp32")
    g = s_tr.rule.make_group(weight_decay=0.1)
    dy, x = torch.zeros(0, 72), torch.zeros(0, 192)
    fm.fused_wgrad_step(dy, x, w, s_tr, s_tr.prepare_step(g), backend="triton")
    fm.fused_wgrad_step(dy, x, w_ref, s_ref, s_ref.prepare_step(g), backend="torch")
    assert not torch.equal(w, torch.randn(72, 192, generator=torch.Generator().manual_seed(3)))
    assert_close_verbose(w, w_ref, rtol=1e-6, atol=0.0, what="weight")


# ---- the replay: a weight's validated step repeated for dY/X of the same layout -------------

class _FakeBound:
    def __init__(self):
        self.calls = []

    def __call__(self, stream, *values):
        self.calls.append((stream, values))


def _misaligned(shape, dtype=torch.bfloat16):
    numel = int(torch.Size(shape).numel())
    return torch.zeros(numel + 8, dtype=dtype)[1:1 + numel].view(shape)  # 2 bytes off a 16-byte boundary


@pytest.fixture
def replay_case(monkeypatch):
    """A replay recorded from CPU tensors (the device checks see CPU as the current device)."""
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: -1, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 7, raising=False)
    w, state, g, _ = _setup("adamw", "bf16", "bf16")
    hyper, tel = state.prepare_step(g), ops.StepTelemetry.zeros("cpu")
    dy, x = torch.randn(2, K, M).bfloat16(), torch.randn(2, K, N).bfloat16()
    bound = _FakeBound()
    replay = ops._Replay(bound, (ops._layout(dy), ops._layout(x)), w, hyper, tel, None, None, False)
    call = dict(grad_output=torch.randn(2, K, M).bfloat16(), input=torch.randn(2, K, N).bfloat16(), weight=w,
                hyper=hyper, telemetry=tel, accumulated=None, grad_scale=None, backend=None, allow_tf32=False,
                config=None)
    return replay, bound, call, state


def test_replay_launches_new_operands_of_the_recorded_layout(replay_case):
    replay, bound, call, _ = replay_case
    assert replay.launch(**call)
    stream, values = bound.calls[-1]
    assert stream == 7 and values[0] is call["grad_output"] and values[1] is call["input"]
    assert values[2] is call["telemetry"].sumsq  # the kernel's stand-in for an absent scale


CHANGES = {
    "weight": lambda c, m: c.update(weight=c["weight"].clone()),
    "hyper": lambda c, m: c.update(hyper=c["hyper"].clone()),
    "telemetry": lambda c, m: c.update(telemetry=ops.StepTelemetry.zeros("cpu")),
    "telemetry_tensor": lambda c, m: m.setattr(c["telemetry"], "sumsq", torch.zeros(1)),
    "accumulated": lambda c, m: c.update(accumulated=torch.zeros(M, N)),
    "config": lambda c, m: c.update(config=TileConfig(32, 64, 32, 1, 4, 1)),
    "backend": lambda c, m: c.update(backend="torch"),
    "allow_tf32": lambda c, m: c.update(allow_tf32=True),
    "observer": lambda c, m: m.setattr(ops, "launch_observer", lambda *a: None),
    "dy_shape": lambda c, m: c.update(grad_output=torch.randn(1, 2 * K, M).bfloat16()),
    "dy_strides": lambda c, m: c.update(grad_output=torch.randn(2, M, K).bfloat16().transpose(1, 2)),
    "dy_dtype": lambda c, m: c.update(grad_output=torch.randn(2, K, M)),
    "dy_alignment": lambda c, m: c.update(grad_output=_misaligned((2, K, M))),
    "x_alignment": lambda c, m: c.update(input=_misaligned((2, K, N))),
    "x_subclass": lambda c, m: c.update(input=torch.nn.Parameter(c["input"], requires_grad=False)),
    "grad_scale": lambda c, m: c.update(grad_scale=torch.ones(1)),
    "launch_hook": lambda c, m: m.setattr(ops, "no_launch_hooks", lambda: False),
    "current_device": lambda c, m: m.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_replay_refuses_anything_but_the_recorded_call(replay_case, monkeypatch, change):
    replay, bound, call, _ = replay_case
    CHANGES[change](call, monkeypatch)
    assert not replay.launch(**call)
    assert bound.calls == []


@pytest.mark.parametrize("scale,ok", [(torch.ones(1), True), (None, False), (torch.ones(1, dtype=torch.float64), False),
                                      (torch.ones(2), False), (_misaligned((1,), torch.float32), False)])
def test_replay_with_a_grad_scale_takes_a_new_scale_each_step(replay_case, scale, ok):
    _, _, call, _ = replay_case
    bound = _FakeBound()
    layouts = (ops._layout(call["grad_output"]), ops._layout(call["input"]))
    replay = ops._Replay(bound, layouts, call["weight"], call["hyper"], call["telemetry"], torch.ones(1), None, False)
    assert replay.launch(**dict(call, grad_scale=scale)) == ok
    assert [values[2] for _, values in bound.calls] == ([scale] if ok else [])


def test_fused_wgrad_step_takes_the_replay_or_the_full_path(replay_case):
    replay, bound, call, state = replay_case
    state.launch_cache[ops._Replay] = replay
    w, before = call["weight"], call["weight"].clone()
    replays = ops.launch_counts["replay"]
    fm.fused_wgrad_step(call["grad_output"], call["input"], w, state, call["hyper"], telemetry=call["telemetry"])
    assert len(bound.calls) == 1 and ops.launch_counts["replay"] == replays + 1
    assert torch.equal(w, before)  # the fake bound launch wrote nothing
    fm.fused_wgrad_step(call["grad_output"], call["input"], w, state, call["hyper"])  # no telemetry: full path
    assert len(bound.calls) == 1 and not torch.equal(w, before)


def test_a_replay_is_bound_once_a_layout_comes_twice_in_a_row(monkeypatch):
    binds = []
    monkeypatch.setattr(ops, "_launch_triton", lambda *args, bind=False, **kw: binds.append(bind))
    w, state, g, _ = _setup("adamw", "bf16", "bf16")
    tel = ops.StepTelemetry.zeros("cpu")

    def step(tokens, wrap=lambda t: t, **kw):
        dy, x = torch.randn(tokens, M).bfloat16(), torch.randn(tokens, N).bfloat16()
        fm.fused_wgrad_step(dy, wrap(x), w, state, state.prepare_step(g), backend="triton", **kw)

    for tokens in (5, 7, 7, 7, 3):  # an expert's token count moves; a dense layer's does not
        step(tokens, telemetry=tel)
    step(3)  # no telemetry of its own: not the engine's call
    subclass = lambda t: torch.nn.Parameter(t, requires_grad=False)  # noqa: E731
    step(4, subclass, telemetry=tel)
    step(4, subclass, telemetry=tel)  # a tensor subclass has no layout to check: never bound
    assert binds == [False, False, True, True, False, False, False, False]


def test_the_benchmarks_main_loop_reduces_the_gradient_and_writes_nothing_else():
    """``wgrad_mainloop`` (the "epilogue compiled out" arm): each tile's sum lands in the sink,
    so the sink is the gradient's sum; the weight only lends its shape."""
    gen = torch.Generator().manual_seed(3)
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    w = torch.full((M, N), 7.0)
    sink = torch.zeros(1)
    ops.wgrad_mainloop(dy, x, w, sink=sink)
    g = ops.reference_gradient(dy, x)
    assert abs(sink.item() - g.sum().item()) <= 1e-5 * g.abs().sum().item()
    assert torch.equal(w, torch.full((M, N), 7.0))


def test_the_main_loop_of_a_configs_own_kernel_takes_the_weights_state():
    """With a config and the weight's state (the benchmark's FORGE arm), the main loop runs on
    the config's geometry (here the interpreter's Triton kernel on a Gluon config's guard tile)
    and reduces the same gradient; a state of another shape is refused before any launch."""
    from forge_mcore.kernels.configs import CONFIGS

    gen = torch.Generator().manual_seed(4)
    dy, x = grid_tensor(K, M, generator=gen), grid_tensor(K, N, generator=gen)
    w = torch.full((M, N), 7.0)
    state = fm.ForgeParamState.create(w, "adamw", {}, "fp32", "fp32")
    coop = next(c for c in CONFIGS if c.kernel == "gluon_coop")
    sink = torch.zeros(1)
    ops.wgrad_mainloop(dy, x, w, sink=sink, config=coop, state=state)
    g = ops.reference_gradient(dy, x)
    assert abs(sink.item() - g.sum().item()) <= 1e-5 * g.abs().sum().item()
    assert torch.equal(w, torch.full((M, N), 7.0)) and not state.slots[0].data.any()
    other = fm.ForgeParamState.create(torch.zeros(M + 1, N), "adamw", {}, "fp32", "fp32")
    with pytest.raises(ValueError, match="pass weight's own state"):
        ops.wgrad_mainloop(dy, x, w, sink=torch.zeros(1), config=coop, state=other)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stochastic_rounding_draws_new_bits_every_step(backend):
    """A sub-ulp step repeated must not round each element the same way every time: with the
    same random bits at every step, the elements that rounded down at step 1 would never move
    (a per-element dead zone that the mean hides). 24 eighth-ulp steps: (7/8)^24 = 4% stay put."""
    ulp = 2.0**-7
    rows, cols = 64, 128
    w = torch.ones(rows, cols, dtype=torch.bfloat16)
    state = fm.ForgeParamState.create(w, "sgd", {"lr": 1.0}, "fp32", "bf16_sr", seed=1)
    g = state.rule.make_group(lr=1.0)
    dy, x = torch.full((1, rows), -ulp / 8), torch.ones(1, cols)
    for _ in range(24):
        fm.fused_wgrad_step(dy, x, w, state, state.prepare_step(g), backend=backend)
    moved = (w.float() > 1.0).float().mean().item()
    assert moved > 0.9, f"only {moved:.1%} of the elements ever moved"
    assert abs(w.float().mean().item() - (1 + 24 * ulp / 8)) < 0.1 * ulp
