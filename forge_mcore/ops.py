"""The one call every placement makes: ``fused_wgrad_step``.

It runs the Triton kernel on CUDA tensors and the plain-torch reference of the
same rule, codec and store on CPU tensors, with one signature. ``backend=``
(or the ``FORGE_BACKEND`` environment variable) forces either; forcing Triton
on CPU tensors needs ``TRITON_INTERPRET=1``. ``launch_counts`` records which
backend really ran, so tests can prove the Triton path executed.

Everything is validated before anything is written: a bad call raises
``ValueError``/``TypeError`` naming the argument and leaves weight, state and
telemetry untouched.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import torch

from .kernels.configs import CONFIGS, INTERPRETER_CONFIG, TileConfig, prune_configs
from .param_state import ForgeParamState

# Which backend ran, counted per launch ("triton" / "torch").
launch_counts: Counter[str] = Counter()
# Optional hook called as ``observer(config, non_tensor_args, constexprs)`` before every
# Triton launch: lets tests check that per-step values never reach the specialization.
launch_observer: Callable[[TileConfig, tuple, dict], None] | None = None

_SUPPORTED_INPUT_DTYPES = (torch.float32, torch.bfloat16)
# Tile used for the torch backend's non-finite check (a tile is the unit of skipping).
TORCH_BACKEND_TILE = (128, 128)


@dataclass
class StepTelemetry:
    """Where one fused step adds its telemetry (1-element device tensors).

    sumsq: fp32, += sum of g^2 over every tile that was applied.
    nonfinite_tiles: int32, += number of tiles skipped for a NaN/Inf gradient.
    """

    sumsq: torch.Tensor
    nonfinite_tiles: torch.Tensor

    @classmethod
    def zeros(cls, device: torch.device | str) -> "StepTelemetry":
        return cls(torch.zeros(1, dtype=torch.float32, device=device),
                   torch.zeros(1, dtype=torch.int32, device=device))


def interpreter_active() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def resolve_backend(device: torch.device, backend: str | None = None) -> str:
    """``"triton"`` or ``"torch"`` for tensors on ``device``."""
    choice = (backend or os.environ.get("FORGE_BACKEND") or "auto").lower()
    if choice not in ("auto", "triton", "torch"):
        raise ValueError(f"backend must be 'auto', 'triton' or 'torch', got {choice!r}")
    if choice == "auto":
        return "triton" if device.type == "cuda" else "torch"
    if choice == "triton" and device.type != "cuda" and not interpreter_active():
        raise ValueError(
            "backend='triton' on CPU tensors needs the Triton interpreter: set TRITON_INTERPRET=1 "
            "before importing triton, or use backend='torch'"
        )
    return choice


def fused_wgrad_step(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    state: ForgeParamState,
    hyper: torch.Tensor,
    *,
    telemetry: StepTelemetry | None = None,
    backend: str | None = None,
    allow_tf32: bool = False,
    config: TileConfig | None = None,
) -> None:
    """One optimizer step of ``weight`` from the gradient ``grad_output^T @ input``.

    grad_output: (..., out_features) upstream gradient dY.
    input: (..., in_features) layer input X, same leading shape and dtype as dY.
    weight: (out_features, in_features), contiguous; updated in place.
    state: the weight's ``ForgeParamState``; its codes, scales and master update in place.
    hyper: this step's scalars, from ``state.prepare_step(group)``.
    telemetry: where to add sum(g^2) and the count of skipped non-finite tiles.
    allow_tf32: let fp32 operands use TF32 tensor cores (off: IEEE fp32 dots).
    config: a fixed tile config instead of the tuned one (benchmarks, tests).

    The gradient is never materialized on the Triton path.
    """
    dy, x = _check_step_args(grad_output, input, weight, state, hyper, telemetry)
    device = weight.device
    kind = resolve_backend(device, backend)
    if telemetry is None:
        telemetry = StepTelemetry.zeros(device)
    if kind == "triton":
        _launch_triton(dy, x, weight, state, hyper, telemetry, allow_tf32, config)
    else:
        _torch_step(dy, x, weight, state, hyper, telemetry, config)
    launch_counts[kind] += 1


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------

def _check_step_args(grad_output, input, weight, state, hyper, telemetry):
    for name, t in (("grad_output", grad_output), ("input", input), ("weight", weight), ("hyper", hyper)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not isinstance(state, ForgeParamState):
        raise TypeError(f"state must be a ForgeParamState, got {type(state).__name__}")
    if weight.dim() != 2:
        raise ValueError(f"weight must be 2-D (out_features, in_features), got shape {tuple(weight.shape)}")
    if not weight.is_contiguous():
        raise ValueError("weight must be contiguous (pass a transposed problem instead of a strided weight)")
    if weight.dtype != state.store.weight_dtype:
        raise TypeError(
            f"weight dtype {weight.dtype} does not match weight_store {state.store.name!r} "
            f"({state.store.weight_dtype}); fp16 weights are not supported, use bf16"
        )
    out_f, in_f = weight.shape
    if grad_output.dim() < 2 or input.dim() < 2:
        raise ValueError(
            f"grad_output and input need a token axis: got shapes {tuple(grad_output.shape)} and {tuple(input.shape)}"
        )
    if grad_output.shape[-1] != out_f:
        raise ValueError(f"grad_output has {grad_output.shape[-1]} features, weight has out_features={out_f}")
    if input.shape[-1] != in_f:
        raise ValueError(f"input has {input.shape[-1]} features, weight has in_features={in_f}")
    if grad_output.shape[:-1] != input.shape[:-1]:
        raise ValueError(
            f"grad_output and input disagree on the token axes: {tuple(grad_output.shape[:-1])} vs {tuple(input.shape[:-1])}"
        )
    for name, t in (("grad_output", grad_output), ("input", input)):
        if t.dtype not in _SUPPORTED_INPUT_DTYPES:
            raise TypeError(f"{name} dtype {t.dtype} is not supported: use float32 or bfloat16")
    if grad_output.dtype != input.dtype:
        raise TypeError(f"grad_output ({grad_output.dtype}) and input ({input.dtype}) must share a dtype")
    tensors = {"grad_output": grad_output, "input": input, "hyper": hyper}
    if state.master is not None:
        tensors["state.master"] = state.master
    for slot in state.slots:
        if slot is not None:
            tensors["state"] = slot.data
    if telemetry is not None:
        tensors["telemetry.sumsq"] = telemetry.sumsq
        tensors["telemetry.nonfinite_tiles"] = telemetry.nonfinite_tiles
    for name, t in tensors.items():
        if t.device != weight.device:
            raise ValueError(f"{name} is on {t.device} but weight is on {weight.device}")
    for spec in state.specs:
        slot = state.slots[spec.slot]
        if tuple(slot.data.shape) != (out_f, in_f):
            raise ValueError(f"state {spec.name!r} has shape {tuple(slot.data.shape)}, weight {tuple(weight.shape)}")
    if state.master is not None and tuple(state.master.shape) != (out_f, in_f):
        raise ValueError(f"state.master has shape {tuple(state.master.shape)}, weight {tuple(weight.shape)}")
    if hyper.dtype != torch.float32 or hyper.shape != (state.seed_index + 1,):
        raise ValueError(
            f"hyper must be the fp32 vector from state.prepare_step() ({state.seed_index + 1} values), "
            f"got {hyper.dtype} of shape {tuple(hyper.shape)}"
        )
    if telemetry is not None:
        if telemetry.sumsq.dtype != torch.float32 or telemetry.sumsq.numel() != 1:
            raise ValueError("telemetry.sumsq must be a 1-element float32 tensor")
        if telemetry.nonfinite_tiles.dtype != torch.int32 or telemetry.nonfinite_tiles.numel() != 1:
            raise ValueError("telemetry.nonfinite_tiles must be a 1-element int32 tensor")
    # Flatten the token axes; reshape copies only when the leading axes cannot be viewed.
    return grad_output.reshape(-1, out_f), input.reshape(-1, in_f)


# ---------------------------------------------------------------------------
# Triton backend
# ---------------------------------------------------------------------------

# (shape, dtypes, rule, variant, codec, store) -> tuned TileConfig
_tuned: dict[tuple, TileConfig] = {}


def _launch_triton(dy, x, weight, state, hyper, telemetry, allow_tf32, config):
    from .kernels.fused_wgrad import fused_wgrad_step_kernel

    M, N = weight.shape
    K = dy.shape[0]
    fp32_dots = dy.dtype == torch.float32
    precision = "tf32" if (not fp32_dots or allow_tf32) else "ieee"
    slots = state.slots
    dummy = weight  # stands in for absent pointers; never dereferenced

    def ptrs(i):
        s = slots[i]
        if s is None:
            return dummy, dummy
        return s.data, (s.scale if s.scale is not None else dummy)

    constexprs = dict(
        UPDATE=state.rule.triton_update, VARIANT=state.variant,
        STATE_LOAD=state.codec.triton_load, STATE_STORE=state.codec.triton_store,
        HAS_S0=slots[0] is not None, HAS_S1=slots[1] is not None, HAS_S2=slots[2] is not None,
        NONNEG_S0=bool(slots[0] and slots[0].nonnegative), NONNEG_S1=bool(slots[1] and slots[1].nonnegative),
        NONNEG_S2=bool(slots[2] and slots[2].nonnegative),
        WEIGHT_LOAD=state.store.triton_load, WEIGHT_STORE=state.store.triton_store,
        SEED_INDEX=state.seed_index, DOT_PRECISION=precision,
        WIDEN_BF16=dy.dtype == torch.bfloat16 and interpreter_active(),
    )
    NB = state.codec.scale_blocks(N)

    def launch(cfg, dy_, x_, w_, master_, s_ptrs, hyper_, sumsq_, bad_, M_):
        args = (
            dy_, x_, w_, master_ if master_ is not None else w_,
            *s_ptrs[0], *s_ptrs[1], *s_ptrs[2],
            hyper_, sumsq_, bad_,
            M_, N, K, NB, dy_.stride(0), dy_.stride(1), x_.stride(0), x_.stride(1),
        )
        if launch_observer is not None:
            launch_observer(cfg, tuple(a for a in args if not isinstance(a, torch.Tensor)), constexprs)
        grid = (triton_cdiv(M_, cfg.block_m) * triton_cdiv(N, cfg.block_n),)
        fused_wgrad_step_kernel[grid](
            *args, **constexprs,
            BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m,
            num_warps=cfg.num_warps, num_stages=cfg.num_stages,
        )

    if config is None:
        config = _select_config(dy, x, weight, state, hyper, launch)
    launch(config, dy, x, weight, state.master, [ptrs(0), ptrs(1), ptrs(2)], hyper,
           telemetry.sumsq, telemetry.nonfinite_tiles, M)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _select_config(dy, x, weight, state, hyper, launch) -> TileConfig:
    if interpreter_active():
        return INTERPRETER_CONFIG
    M, N = weight.shape
    K = dy.shape[0]
    key = (M, N, 1 << max(K - 1, 0).bit_length(), dy.dtype, weight.dtype, state.rule.name,
           state.variant, state.codec.name, state.store.name)
    if key in _tuned:
        return _tuned[key]
    candidates = prune_configs(CONFIGS, M, N, K, dy.element_size())
    if len(candidates) > 1:
        best = _time_candidates(candidates, dy, x, weight, state, hyper, launch)
    else:
        best = candidates[0]
    _tuned[key] = best
    return best


# The tuner times candidates on scratch copies of (at most) this many rows of
# the weight, so it never mutates the real weight/state and its transient
# memory stays bounded on huge layers (an LM head).
_TUNE_MAX_ROWS = 8192


def _time_candidates(candidates, dy, x, weight, state, hyper, launch) -> TileConfig:
    import triton

    rows = min(weight.shape[0], _TUNE_MAX_ROWS)
    w = weight[:rows].clone()
    master = state.master[:rows].clone() if state.master is not None else None
    s_ptrs = []
    for s in state.slots:
        if s is None:
            s_ptrs.append((w, w))
        else:
            s_ptrs.append((s.data[:rows].clone(), s.scale[:rows].clone() if s.scale is not None else w))
    dy_ = dy[:, :rows]
    sumsq = torch.zeros(1, dtype=torch.float32, device=w.device)
    bad = torch.zeros(1, dtype=torch.int32, device=w.device)
    timings = {}
    for cfg in candidates:
        try:
            timings[cfg] = triton.testing.do_bench(
                lambda: launch(cfg, dy_, x, w, master, s_ptrs, hyper, sumsq, bad, rows),
                warmup=5, rep=20, return_mode="median",
            )
        except Exception as exc:  # out of resources on this device: not a candidate here
            if "resources" not in str(exc).lower() and "shared memory" not in str(exc).lower():
                raise
    if not timings:
        raise RuntimeError(f"no tile config could launch for weight {tuple(weight.shape)}")
    return min(timings, key=timings.get)


def tuned_configs() -> dict[tuple, TileConfig]:
    """The tile configs chosen so far, by shape key (read-only view)."""
    return dict(_tuned)


# ---------------------------------------------------------------------------
# torch backend (the reference; what CPU training and CI run)
# ---------------------------------------------------------------------------

def reference_gradient(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """G = dY^T X in fp32 (the gradient the kernel keeps in registers)."""
    return dy.float().t() @ x.float()


def tile_ok_mask(g: torch.Tensor, tile: tuple[int, int]) -> torch.Tensor:
    """(tiles_m, tiles_n) bool: which tiles of ``g`` are entirely finite."""
    bm, bn = tile
    M, N = g.shape
    finite = torch.isfinite(g)
    padded = torch.nn.functional.pad(finite, (0, -N % bn, 0, -M % bm), value=True)
    return padded.view(padded.shape[0] // bm, bm, padded.shape[1] // bn, bn).all(dim=3).all(dim=1)


def _expand_tiles(ok_tiles: torch.Tensor, tile: tuple[int, int], rows: int, cols: int, col_unit: int = 1):
    bm, bn = tile
    return ok_tiles.repeat_interleave(bm, 0)[:rows].repeat_interleave(bn // col_unit, 1)[:, :cols]


@torch.no_grad()
def _torch_step(dy, x, weight, state, hyper, telemetry, config):
    tile = (config.block_m, config.block_n) if config is not None else TORCH_BACKEND_TILE
    M, N = weight.shape
    g = reference_gradient(dy, x)
    ok_tiles = tile_ok_mask(g, tile)
    ok = _expand_tiles(ok_tiles, tile, M, N)
    g = torch.where(ok, g, torch.zeros((), device=g.device))
    telemetry.sumsq += (g * g).sum()
    telemetry.nonfinite_tiles += (~ok_tiles).sum().to(torch.int32)

    h = hyper.tolist()
    w = state.store.load(weight, state.master)
    decoded = [state.codec.decode(s) if s is not None else None for s in state.slots]
    state.rule.reference_update(g, w, decoded, h[: state.seed_index], state.variant)

    new_weight = torch.empty_like(weight)
    new_master = torch.empty_like(state.master) if state.master is not None else None
    generator = None
    if state.store.stochastic:
        generator = torch.Generator(device=weight.device).manual_seed(int(h[state.seed_index]))
    state.store.store_(new_weight, new_master, w, generator)
    _masked_copy_(weight, new_weight, ok)
    if state.master is not None:
        _masked_copy_(state.master, new_master, ok)
    for slot, value in zip(state.slots, decoded):
        if slot is None:
            continue
        fresh = state.codec.zeros((M, N), weight.device, slot.nonnegative)
        state.codec.encode_(fresh, value)
        _masked_copy_(slot.data, fresh.data, ok)
        if slot.scale is not None:
            ok_blocks = _expand_tiles(ok_tiles, tile, M, slot.scale.shape[1], col_unit=state.codec.block)
            _masked_copy_(slot.scale, fresh.scale, ok_blocks)


def _masked_copy_(dst: torch.Tensor, src: torch.Tensor, mask: torch.Tensor) -> None:
    """dst[mask] = src[mask], bit for bit (fp8 codes are moved as bytes)."""
    if dst.element_size() == 1:
        dst, src = dst.view(torch.uint8), src.view(torch.uint8)
    dst.copy_(torch.where(mask, src, dst))
