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

import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from .kernels.configs import CONFIGS, INTERPRETER_CONFIG, TileConfig, prune_configs, smem_budget
from .kernels.launch import no_launch_hooks
from .param_state import ForgeParamState

if TYPE_CHECKING:
    from triton.tools.tensor_descriptor import TensorDescriptor

# Which backend ran, counted per launch ("triton" / "torch"); "replay": Triton launches through a ``_Replay``.
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
    nonfinite_tiles: int32, += number of tiles skipped for a NaN/Inf gradient (or one whose g^2 overflows).
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
    accumulated: torch.Tensor | None = None,
    grad_scale: torch.Tensor | None = None,
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
    accumulated: an (out, in) fp32/bf16 partial gradient of earlier micro-batches
        (from ``accumulate_wgrad``): the fp32 sum over this call's tokens starts from it,
        so micro-batches split where a K block ends sum as one launch over all of them.
    grad_scale: a 1-element fp32 device tensor multiplying the gradient before the
        rule (clipping coefficient, loss or data-parallel scale); telemetry sees
        the unscaled gradient. It must be finite: the non-finite guard runs on the
        unscaled gradient, so a NaN scale would reach every tile it lets through.
    telemetry: where to add sum(g^2) and the count of skipped non-finite tiles.
    allow_tf32: let fp32 operands use TF32 tensor cores (off: IEEE fp32 dots).
    config: a fixed tile config instead of the tuned one (benchmarks, tests).

    The gradient is never materialized on the Triton path.
    """
    replay = getattr(state, "launch_cache", _NO_CACHE).get(_Replay)
    if replay is not None and replay.launch(grad_output, input, weight, hyper, telemetry, accumulated, grad_scale,
                                            backend, allow_tf32, config):
        launch_counts["triton"] += 1
        launch_counts["replay"] += 1
        return
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight must be a torch.Tensor, got {type(weight).__name__}")
    dy, x = _check_operands(grad_output, input, tuple(weight.shape))
    _check_step_args(weight, state, hyper, telemetry, accumulated, grad_scale, dy, config)
    kind = resolve_backend(weight.device, backend)
    # What a replay repeats: the engine's calls (its own telemetry, the tuned config, no accumulator)
    engine_call = telemetry is not None and accumulated is None and config is None
    if telemetry is None:
        telemetry = StepTelemetry.zeros(weight.device)
    if kind == "triton":
        # Bound once a layout comes twice in a row (an expert's token count changes every step:
        # binding it each time would only add host time); never for tensor subclasses.
        layouts = (_layout(grad_output), _layout(input))
        replayable = engine_call and None not in layouts and state.launch_cache.get(_LAST_LAYOUTS) == layouts
        state.launch_cache[_LAST_LAYOUTS] = layouts
        bound = _launch_triton(dy, x, weight, state, hyper, telemetry, accumulated, grad_scale, allow_tf32, config,
                               bind=replayable)
        if bound is not None and dy.data_ptr() == grad_output.data_ptr() and x.data_ptr() == input.data_ptr():
            state.launch_cache[_Replay] = _Replay(bound, layouts, weight, hyper, telemetry, grad_scale, backend,
                                                  allow_tf32)
    else:
        _torch_step(dy, x, weight, state, hyper, telemetry, accumulated, grad_scale, config)
    launch_counts[kind] += 1


_NO_CACHE: dict = {}
_LAST_LAYOUTS = "last dY/X layouts"  # launch_cache key: the layouts of the weight's last full-path step


def _layout(t: torch.Tensor) -> tuple | None:
    """What a launch's specialization and argument expansion depend on in dY or X."""
    if type(t) is not torch.Tensor:
        return None
    return t.shape, t.stride(), t.dtype, t.get_device(), t.data_ptr() % 16 == 0


class _Replay:
    """One weight's last validated Triton step, repeated for the next dY and X of the same layout.

    A training run passes the same weight, scalars and telemetry objects at every step, and
    dY and X of the same shape, strides, dtype, device and 16-byte alignment. For those,
    everything the full path derives (validation, backend, tile config, specialization, the
    expanded launch arguments) holds unchanged; only the base addresses of dY, X and the
    grad scale are new. ``launch`` checks exactly that and launches through a
    ``BoundLaunch``; on anything else it returns False and the caller takes the full path.
    At batch 1 the host paces the GPU and this path runs once per fused layer per backward.
    Settings read from the environment (``FORGE_BACKEND``, ``FORGE_TMA``,
    ``FORGE_DIRECT_LAUNCH``) are those of the step the replay was made from.
    """

    def __init__(self, bound, layouts, weight, hyper, telemetry, grad_scale, backend, allow_tf32) -> None:
        self.bound = bound
        self.weight, self.hyper, self.telemetry = weight, hyper, telemetry
        self.sumsq, self.nonfinite = telemetry.sumsq, telemetry.nonfinite_tiles
        self.backend, self.allow_tf32 = backend, allow_tf32
        self.dy_layout, self.x_layout = layouts  # ``_layout`` of the dY and X it was bound with
        self.scale_aligned = grad_scale.data_ptr() % 16 == 0 if grad_scale is not None else None
        self.device = weight.get_device()

    def launch(self, grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, hyper: torch.Tensor,
               telemetry: StepTelemetry | None, accumulated: torch.Tensor | None, grad_scale: torch.Tensor | None,
               backend: str | None, allow_tf32: bool, config: TileConfig | None) -> bool:
        if (weight is not self.weight or hyper is not self.hyper or telemetry is not self.telemetry
                or telemetry.sumsq is not self.sumsq or telemetry.nonfinite_tiles is not self.nonfinite
                or accumulated is not None or config is not None or backend != self.backend
                or allow_tf32 != self.allow_tf32 or launch_observer is not None
                or _layout(grad_output) != self.dy_layout or _layout(input) != self.x_layout):
            return False
        if grad_scale is None:
            if self.scale_aligned is not None:
                return False
            grad_scale = self.sumsq  # the kernel's stand-in for an absent scale, never read
        elif (self.scale_aligned is None or type(grad_scale) is not torch.Tensor
              or grad_scale.dtype is not torch.float32 or grad_scale.numel() != 1
              or grad_scale.get_device() != self.device or (grad_scale.data_ptr() % 16 == 0) != self.scale_aligned):
            return False
        if torch._C._cuda_getDevice() != self.device or not no_launch_hooks():  # a profiler's hook sees every launch
            return False
        self.bound(torch._C._cuda_getCurrentRawStream(self.device), grad_output, input, grad_scale)
        return True


def accumulate_wgrad(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    buffer: torch.Tensor,
    *,
    backend: str | None = None,
    allow_tf32: bool = False,
    config: TileConfig | None = None,
) -> None:
    """``buffer += grad_output^T @ input``: an earlier micro-batch of exact accumulation.

    buffer: (out_features, in_features), contiguous, fp32 or bf16. The sum is
    formed in fp32 registers; a bf16 buffer is rounded to nearest even once per call.
    """
    if not isinstance(buffer, torch.Tensor):
        raise TypeError(f"buffer must be a torch.Tensor, got {type(buffer).__name__}")
    dy, x = _check_operands(grad_output, input, tuple(buffer.shape), "buffer")
    _check_accumulator("buffer", buffer, buffer.shape, dy)
    kind = resolve_backend(buffer.device, backend)
    if kind == "triton":
        _launch_triton(dy, x, buffer, None, None, None, buffer, None, allow_tf32, config)
    else:
        buffer.add_(reference_gradient(dy, x))
    launch_counts[kind] += 1


def wgrad_mainloop(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    *,
    sink: torch.Tensor,
    allow_tf32: bool = False,
    config: TileConfig | None = None,
    state: ForgeParamState | None = None,
) -> None:
    """The fused kernel's main loop alone, each tile reduced into ``sink`` (1-element
    fp32): the "epilogue compiled out" arm of the benchmarks. Nothing is written but ``sink``.

    With ``config`` and ``state`` (``weight``'s own), the kernel the step would run with that
    config: the Gluon kernel where it applies (the step's shared-memory plan, its epilogue
    compiled out), else the Triton kernel on the config's Triton geometry. With ``config``
    alone, the Triton kernel; with neither, a Triton config tuned for the main loop alone.
    Without ``state``, ``weight`` only supplies the shape."""
    dy, x = _check_operands(grad_output, input, tuple(weight.shape))
    if weight.device.type != "cuda" and not interpreter_active():
        raise ValueError("wgrad_mainloop runs the fused kernel: use CUDA tensors or TRITON_INTERPRET=1")
    if state is not None and any(s is not None and s.shape != tuple(weight.shape) for s in state.slots):
        raise ValueError(f"wgrad_mainloop: state's slots are not {tuple(weight.shape)}: pass weight's own state")
    if config is not None and state is not None and not interpreter_active() and gluon_enabled():
        from .kernels import gluon_wgrad

        states = state.slot_tensors
        slab_tma, tile_tma = _tma_eligible(dy, x, _Operands(weight, state.master, states, None, sink, sink))
        if gluon_wgrad.applies(config, state, dy, None, slab_tma, tile_tma):
            launch_counts["gluon"] += 1
            gluon_wgrad.launch(config, dy, x, weight, state, states, sink, sink, sink, None, None,
                               mainloop_only=True)
            return
    _launch_triton(dy, x, weight, None, None, StepTelemetry(sink, sink), None, None, allow_tf32, config,
                   mainloop_only=True)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------

def _check_operands(grad_output, input, weight_shape, target="weight"):
    """Validate dY and X against the (out, in) shape of ``target`` (the weight, or an
    accumulation buffer); return them flattened to 2-D."""
    for name, t in (("grad_output", grad_output), ("input", input)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype not in _SUPPORTED_INPUT_DTYPES:
            raise TypeError(f"{name} dtype {t.dtype} is not supported: use float32 or bfloat16")
        if t.dim() < 2:
            raise ValueError(f"{name} needs a token axis and a feature axis, got shape {tuple(t.shape)}")
    if weight_shape is None or len(weight_shape) != 2:
        raise ValueError(f"{target} must be 2-D (out_features, in_features), got shape {weight_shape}")
    out_f, in_f = weight_shape
    if grad_output.shape[-1] != out_f:
        raise ValueError(f"grad_output has {grad_output.shape[-1]} features, {target} has out_features={out_f}")
    if input.shape[-1] != in_f:
        raise ValueError(f"input has {input.shape[-1]} features, {target} has in_features={in_f}")
    if grad_output.shape[:-1] != input.shape[:-1]:
        raise ValueError(
            f"grad_output and input disagree on the token axes: {tuple(grad_output.shape[:-1])} vs "
            f"{tuple(input.shape[:-1])}"
        )
    if grad_output.dtype != input.dtype:
        raise TypeError(f"grad_output ({grad_output.dtype}) and input ({input.dtype}) must share a dtype")
    if grad_output.device != input.device:
        raise ValueError(f"input is on {input.device} but grad_output is on {grad_output.device}")
    # Flatten the token axes; reshape copies only when the leading axes cannot be viewed.
    return grad_output.reshape(-1, out_f), input.reshape(-1, in_f)


def _check_accumulator(name, buf, shape, dy):
    if buf.dtype not in (torch.float32, torch.bfloat16):
        raise TypeError(f"{name} must be float32 or bfloat16, got {buf.dtype}")
    if tuple(buf.shape) != tuple(shape) or not buf.is_contiguous():
        layout = "" if buf.is_contiguous() else "non-contiguous "
        raise ValueError(f"{name} must be a contiguous {tuple(shape)} tensor, got a {layout}{tuple(buf.shape)} one")
    if buf.device != dy.device:
        raise ValueError(f"{name} is on {buf.device} but grad_output is on {dy.device}")


def _check_step_args(weight, state, hyper, telemetry, accumulated, grad_scale, dy, config):
    if not isinstance(state, ForgeParamState):
        raise TypeError(f"state must be a ForgeParamState, got {type(state).__name__}")
    if not isinstance(hyper, torch.Tensor):
        raise TypeError(f"hyper must be a torch.Tensor, got {type(hyper).__name__}")
    if telemetry is not None and not isinstance(telemetry, StepTelemetry):
        raise TypeError(f"telemetry must be a StepTelemetry (StepTelemetry.zeros(device)), "
                        f"got {type(telemetry).__name__}")
    if config is not None and not isinstance(config, TileConfig):
        raise TypeError(f"config must be a TileConfig (forge_mcore.kernels.configs), got {type(config).__name__}")
    if not weight.is_contiguous():
        raise ValueError("weight must be contiguous (pass a transposed problem instead of a strided weight)")
    if weight.dtype != state.store.weight_dtype:
        raise TypeError(
            f"weight dtype {weight.dtype} does not match weight_store {state.store.name!r} "
            f"({state.store.weight_dtype}); fp16 weights are not supported, use bf16"
        )
    shape = tuple(weight.shape)
    if shape != tuple(state.weight_shape):
        raise ValueError(f"state was created for a {tuple(state.weight_shape)} weight, this weight is {shape}")
    tensors = {"grad_output": dy, "hyper": hyper}
    if state.master is not None:
        tensors["state.master"] = state.master
    for spec in state.specs:
        tensors[f"state {spec.name!r}"] = state.slots[spec.slot].data
    if telemetry is not None:
        tensors["telemetry.sumsq"] = telemetry.sumsq
        tensors["telemetry.nonfinite_tiles"] = telemetry.nonfinite_tiles
    for name, t in tensors.items():
        if t.device != weight.device:
            raise ValueError(f"{name} is on {t.device} but weight is on {weight.device}")
    for spec in state.specs:
        slot = state.slots[spec.slot]
        if slot.shape != shape:
            raise ValueError(f"state {spec.name!r} has shape {slot.shape}, weight {shape}")
    if state.master is not None and tuple(state.master.shape) != shape:
        raise ValueError(f"state.master has shape {tuple(state.master.shape)}, weight {shape}")
    if hyper is state.hyper_buffer and state.step == 0:
        raise ValueError("hyper is state.hyper_buffer before any state.prepare_step(group): its scalars are unset "
                         "(zeros); pass what state.prepare_step(group) returns")
    if hyper.dtype != torch.float32 or tuple(hyper.shape) != (state.seed_index + 1,):
        raise ValueError(
            f"hyper must be the fp32 vector from state.prepare_step() ({state.seed_index + 1} values), "
            f"got {hyper.dtype} of shape {tuple(hyper.shape)}"
        )
    if grad_scale is not None:
        if (not isinstance(grad_scale, torch.Tensor) or grad_scale.dtype != torch.float32
                or grad_scale.numel() != 1 or grad_scale.device != weight.device):
            raise ValueError(f"grad_scale must be a 1-element float32 tensor on {weight.device}")
    if accumulated is not None:
        if not isinstance(accumulated, torch.Tensor):
            raise TypeError(f"accumulated must be a torch.Tensor, got {type(accumulated).__name__}")
        _check_accumulator("accumulated", accumulated, shape, dy)
    if telemetry is not None:
        if telemetry.sumsq.dtype != torch.float32 or telemetry.sumsq.numel() != 1:
            raise ValueError("telemetry.sumsq must be a 1-element float32 tensor")
        if telemetry.nonfinite_tiles.dtype != torch.int32 or telemetry.nonfinite_tiles.numel() != 1:
            raise ValueError("telemetry.nonfinite_tiles must be a 1-element int32 tensor")


# ---------------------------------------------------------------------------
# Triton backend
# ---------------------------------------------------------------------------

# ((mode, shape, BT bucket, dtypes, rule, variant, codec, store), gluon_enabled()) -> tuned TileConfig
_tuned: dict[tuple, TileConfig] = {}


def _kernel_constexprs(state: ForgeParamState | None, dy: torch.Tensor, allow_tf32: bool,
                       accum: torch.Tensor | None, grad_scale: torch.Tensor | None,
                       mainloop_only: bool = False) -> tuple[tuple, dict]:
    """(key, constexprs): everything the kernel is specialized on but the tile config.
    Per-step values never appear here. Cached per weight (on its state): the launch path
    runs once per fused layer per backward, so its host time adds up."""
    key = ("constexprs", dy.dtype, allow_tf32, accum.dtype if accum is not None else None,
           grad_scale is not None, mainloop_only, interpreter_active())
    cache = state.launch_cache if state is not None else _stateless_launch_cache
    if key not in cache:
        cache[key] = _build_constexprs(state, dy, allow_tf32, accum, grad_scale, mainloop_only)
    return key, cache[key]


# The launch cache of the modes without a state (accumulate, main loop only): constexprs, plans.
_stateless_launch_cache: dict[tuple, object] = {}


def _build_constexprs(state, dy, allow_tf32, accum, grad_scale, mainloop_only) -> dict:
    from .codecs.plain import FP32Codec
    from .codecs.weight import FP32Store
    from .kernels.fused_wgrad import MODE_ACCUMULATE, MODE_MAINLOOP, MODE_STEP
    from .rules.sgd import sgd_update

    fp32_dots = dy.dtype == torch.float32
    common = dict(
        DOT_PRECISION="tf32" if (not fp32_dots or allow_tf32) else "ieee",
        WIDEN_BF16=dy.dtype == torch.bfloat16 and interpreter_active(),
        HAS_ACCUM=accum is not None, ACCUM_BF16=accum is not None and accum.dtype == torch.bfloat16,
        HAS_GRAD_SCALE=grad_scale is not None,
    )
    if state is None:  # accumulate only / main loop only: the step's functions are compiled out
        return dict(
            common, MODE=MODE_MAINLOOP if mainloop_only else MODE_ACCUMULATE, UPDATE=sgd_update, VARIANT=0,
            STATE_LOAD=FP32Codec.triton_load, STATE_STORE=FP32Codec.triton_store,
            HAS_S0=False, HAS_S1=False, HAS_S2=False, NONNEG_S0=False, NONNEG_S1=False, NONNEG_S2=False,
            WEIGHT_LOAD=FP32Store.triton_load, WEIGHT_STORE=FP32Store.triton_store, SEED_INDEX=0,
        )
    slots = state.slots
    return dict(
        common, MODE=MODE_STEP, UPDATE=state.rule.triton_update, VARIANT=state.variant,
        STATE_LOAD=state.codec.triton_load, STATE_STORE=state.codec.triton_store,
        HAS_S0=slots[0] is not None, HAS_S1=slots[1] is not None, HAS_S2=slots[2] is not None,
        NONNEG_S0=bool(slots[0] and slots[0].nonnegative), NONNEG_S1=bool(slots[1] and slots[1].nonnegative),
        NONNEG_S2=bool(slots[2] and slots[2].nonnegative),
        WEIGHT_LOAD=state.store.triton_load, WEIGHT_STORE=state.store.triton_store, SEED_INDEX=state.seed_index,
    )


@dataclass
class _Operands:
    """The mutable tensors of one launch (swapped for scratch copies while tuning).

    cache: where launch data derived from the persistent tensors (weight, master, state
    codes and scales) is kept between launches: the weight's state's ``launch_cache``, or
    None (scratch copies while tuning, accumulate mode: built per launch).
    """

    weight: torch.Tensor
    master: torch.Tensor | None
    states: list[tuple[torch.Tensor, torch.Tensor] | None]
    accum: torch.Tensor | None
    sumsq: torch.Tensor
    nonfinite: torch.Tensor
    cache: dict | None = None

    def scratch(self, rows: int) -> "_Operands":
        def cut(t: torch.Tensor | None) -> torch.Tensor | None:
            return t[:rows].clone() if t is not None else None

        return _Operands(
            cut(self.weight), cut(self.master),
            [(cut(p[0]), cut(p[1])) if p is not None else None for p in self.states],
            cut(self.accum), self.sumsq.clone(), self.nonfinite.clone(),
        )


def _launch_triton(dy, x, weight, state, hyper, telemetry, accum, grad_scale, allow_tf32, config,
                   mainloop_only=False, bind=False):
    """Launch the kernel in step mode (``state`` given), accumulate mode (``state`` None;
    ``weight`` is then the accumulation buffer) or main-loop-only mode (benchmarks).
    With ``bind``, return the launch bound for a replay (``BoundLaunch``) where it went
    through the direct launcher, else None."""

    from .kernels import gluon_wgrad
    from .kernels.fused_wgrad import fused_wgrad_step_kernel

    M, N = weight.shape
    K = dy.shape[0]
    constexpr_key, base_constexprs = _kernel_constexprs(state, dy, allow_tf32, accum, grad_scale, mainloop_only)
    NB = state.codec.scale_blocks(N) if state is not None else 0
    if telemetry is None:
        telemetry = StepTelemetry.zeros(weight.device)
    ops_ = _Operands(
        weight, state.master if state is not None else None,
        state.slot_tensors if state is not None else [None] * 3,
        accum, telemetry.sumsq, telemetry.nonfinite_tiles, state.launch_cache if state is not None else None,
    )
    hyper = hyper if hyper is not None else telemetry.sumsq  # never read in accumulate mode

    slab_tma, tile_tma = _tma_eligible(dy, x, ops_)

    def runs_as(cfg: TileConfig) -> TileConfig:
        """The config a launch with ``cfg`` runs: itself, or where its Gluon kernel does not apply
        (or may not run) its Triton geometry."""
        if (cfg.kernel != "triton" and not mainloop_only and not interpreter_active() and gluon_enabled()
                and gluon_wgrad.applies(cfg, state, dy, accum, slab_tma, tile_tma)):
            return cfg
        return cfg.triton_geometry

    def launch(cfg: TileConfig, o: _Operands, rows: int, dy_: torch.Tensor) -> None:
        cfg = runs_as(cfg)
        if cfg.kernel != "triton":
            launch_counts["gluon"] += 1
            return gluon_wgrad.launch(cfg, dy_, x, o.weight, state, o.states, hyper, o.sumsq, o.nonfinite,
                                      grad_scale, o.cache, bind=bind)
        tiles = _TileSources(cfg, slab_tma, tile_tma, o.cache)
        tile_args, raw_args = tiles.persistent_args(o)
        args = (  # positions in _STABLE_ARGS: the weight's own objects, the same at every step
            tiles.slab(dy_, cfg.block_m), tiles.slab(x, tiles.half), *tile_args,
            hyper, o.sumsq, o.nonfinite, tiles.tile(o.accum) if o.accum is not None else tile_args[0],
            grad_scale if grad_scale is not None else o.sumsq, *raw_args,
            rows, N, K, NB, dy_.stride(0), dy_.stride(1), x.stride(0), x.stride(1),
        )
        plans = o.cache if o.cache is not None else (_stateless_launch_cache if state is None else {})
        plan_key = ("plan", constexpr_key, cfg, slab_tma, tile_tma)
        plan = plans.get(plan_key)
        if plan is None:
            plan = plans[plan_key] = _launch_plan(
                dict(base_constexprs, SLAB_TMA=slab_tma, TILE_TMA=tile_tma, PREFETCH=cfg.prefetch,
                     EPILOGUE_STAGES=cfg.epilogue_stages,
                     BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m,
                     SPLIT_N=cfg.split_n),
                dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                     **({"maxnreg": cfg.maxnreg} if cfg.maxnreg else {})),
                stable=_STABLE_ARGS if o.cache is not None else frozenset(),
            )
        if launch_observer is not None:
            launch_observer(cfg, tuple(a for a in args if isinstance(a, int)), plan.constexprs)
        grid = (-(-rows // cfg.block_m) * -(-N // cfg.block_n),)  # triton.cdiv costs microseconds per call
        if interpreter_active():
            fused_wgrad_step_kernel[grid](*args, **plan.constexprs, **plan.options)
            return None
        raw = _direct_launcher()(grid, args, plan)
        return raw.bind(grid, args, plan, _VARYING_ARGS) if bind and raw is not None and o.cache is not None else None

    if config is None:
        config = _select_config(dy, weight, state, accum, launch, ops_, runs_as)
    return launch(config, ops_, M, dy)


# The launch arguments a weight's cached plan sees as the same objects at every step: its
# weight/master/state tiles (2-9), its scalars and telemetry (10-12), its raw pointers (15-18).
_STABLE_ARGS = frozenset([*range(2, 13), *range(15, 19)])
# What a replay passes anew at every step: the dY and X slabs and the grad scale.
_VARYING_ARGS = (0, 1, 14)


def _launch_plan(constexprs: dict, options: dict, stable: frozenset = frozenset()):
    """A ``LaunchPlan`` (the interpreter launches through ``JITFunction``-style keywords only)."""
    from .kernels.launch import LaunchPlan

    if interpreter_active():
        return LaunchPlan(constexprs, options, key=None, constexpr_values=())
    return _direct_launcher().plan(constexprs, options, stable)


@functools.cache
def _direct_launcher():
    from .kernels.fused_wgrad import fused_wgrad_step_kernel
    from .kernels.launch import DirectLauncher

    return DirectLauncher(fused_wgrad_step_kernel)


class _TileSources:
    """What the kernel reads its slabs and tiles through: TMA descriptors sized for ``cfg``, or the tensors.

    The arguments built from the persistent tensors (weight, master, state codes and
    scales) are kept in ``cache`` (the weight's state's ``launch_cache``), so a step
    builds only its dY/X slab descriptors.
    """

    def __init__(self, cfg: TileConfig, slab_tma: bool, tile_tma: bool, cache: dict | None = None) -> None:
        self.cfg, self.slab_tma, self.tile_tma, self.cache = cfg, slab_tma, tile_tma, cache
        self.half = cfg.block_n // cfg.split_n

    def slab(self, t: torch.Tensor, width: int) -> torch.Tensor | TensorDescriptor:
        """dY or X: (BT, features), read in BLOCK_K x width slabs."""
        if not self.slab_tma:
            return t
        from triton.tools.tensor_descriptor import TensorDescriptor

        return TensorDescriptor.from_tensor(t, [self.cfg.block_k, width])

    def tile(self, t: torch.Tensor) -> torch.Tensor | TensorDescriptor:
        """Weight, master, state codes, accumulator: (out, in), read in BLOCK_M x half tiles."""
        if not self.tile_tma:
            return t
        from triton.tools.tensor_descriptor import TensorDescriptor

        return TensorDescriptor.from_tensor(t, [self.cfg.block_m, self.half])

    def persistent_args(self, o: "_Operands") -> tuple[tuple, tuple]:
        """(weight, master, s0, s0 scale, s1, s1 scale, s2, s2 scale) as the kernel reads them,
        and the raw pointers it prefetches through (master or weight, s0..s2). An absent
        tensor is stood in for by the weight, never dereferenced."""
        key = ("persistent", self.cfg.block_m, self.half, self.tile_tma, o.weight.data_ptr())
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        weight_src = self.tile(o.weight)
        state_args = []
        for pair in o.states:
            data, scale = pair if pair is not None else (None, None)
            state_args += [self.tile(data) if data is not None else weight_src,
                           scale if scale is not None else o.weight]
        tile_args = (weight_src, self.tile(o.master) if o.master is not None else weight_src, *state_args)
        raw_args = (o.master if o.master is not None else o.weight,
                    *[(pair[0] if pair is not None else o.weight) for pair in o.states])
        if self.cache is not None:
            self.cache[key] = (tile_args, raw_args)
        return tile_args, raw_args


def _tma_ok(t: torch.Tensor | None) -> bool:
    # The copy engine needs 16-byte aligned bases and row pitches and unit inner strides, and a
    # descriptor needs a nonempty tensor (an expert that received no tokens has BT = 0).
    return t is None or (t.dim() == 2 and t.numel() > 0 and t.stride(1) == 1
                         and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0)


@functools.cache
def _hopper_or_newer(device_index: int) -> bool:
    return torch.cuda.get_device_capability(device_index)[0] >= 9


def _tma_eligible(dy: torch.Tensor, x: torch.Tensor, o: "_Operands") -> tuple[bool, bool]:
    """Whether the dY/X slabs, and the weight/state tiles, may go through tensor
    descriptors: Hopper or newer (or the interpreter) and every such tensor aligned.
    ``FORGE_TMA=0`` forces pointers for both."""
    if os.environ.get("FORGE_TMA", "1") == "0":
        return False, False
    hopper = dy.device.type == "cuda" and _hopper_or_newer(dy.device.index)
    if not (hopper or interpreter_active()):
        return False, False
    tiles = [o.weight, o.master, o.accum] + [pair[0] for pair in o.states if pair is not None]
    return _tma_ok(dy) and _tma_ok(x), all(_tma_ok(t) for t in tiles)


# The tuner times candidates on scratch copies of (at most) this many rows of
# the weight, so it never mutates the real weight/state and its transient
# memory stays bounded on huge layers (an LM head).
_TUNE_MAX_ROWS = 8192


def _tune_key(dy, weight, state, accum) -> tuple:
    """What a tuned tile config is valid for: mode, shape, BT rounded up to a power of 2,
    dtypes, and the rule/codec/store that set the epilogue's cost."""
    M, N = weight.shape
    mode = "step" if state is not None else ("accumulate" if accum is not None else "mainloop")
    return (
        mode, M, N, 1 << max(dy.shape[0] - 1, 0).bit_length(), dy.dtype,
        weight.dtype, accum.dtype if accum is not None else None,
        *((state.rule.name, state.variant, state.codec.name, state.store.name) if state is not None else ()),
    )


def gluon_enabled() -> bool:
    """Whether the Gluon kernel may run (``FORGE_GLUON=0``: the Triton kernel only, e.g. where its
    persistent grid, one program holding each SM, would delay kernels meant to run beside it).
    Read at each tuning and full launch; a weight's replayed launch keeps its kernel."""
    return os.environ.get("FORGE_GLUON", "1") != "0"


@functools.cache
def _smem_budget(device_index: int | None) -> int:
    """``configs.smem_budget`` of this device (its blocks' opt-in shared memory)."""
    props = torch.cuda.get_device_properties(device_index)
    return smem_budget(getattr(props, "shared_memory_per_block_optin", None))


def _select_config(dy, weight, state, accum, launch, operands: _Operands,
                   runs_as: Callable[[TileConfig], TileConfig] = lambda cfg: cfg) -> TileConfig:
    """A committed winner (``winners.lookup``), else the fastest candidate timed on scratch
    operands; the tuner times each config a launch would run once (``runs_as``: Gluon configs
    that do not apply to this step run their Triton geometry, often a config of the list)."""
    if interpreter_active():
        return INTERPRETER_CONFIG
    M, N = weight.shape
    K = dy.shape[0]
    key = _tune_key(dy, weight, state, accum)
    gluon = gluon_enabled()
    if (key, gluon) in _tuned:
        return _tuned[key, gluon]
    pool = CONFIGS if gluon else tuple(c for c in CONFIGS if c.kernel == "triton")
    candidates = prune_configs(pool, M, N, K, dy.element_size(), _smem_budget(dy.device.index))
    if os.environ.get("FORGE_AUTOTUNE", "0") != "1":
        from .kernels import winners

        committed = winners.lookup(key, torch.cuda.get_device_name(dy.device), candidates,
                                   winners.arch_of(dy.device))
        if committed is not None:  # (a Gluon winner is not a candidate with FORGE_GLUON=0)
            _tuned[key, gluon] = committed
            return committed
    best = candidates[0]
    if len(candidates) > 1:
        import triton

        rows = min(M, _TUNE_MAX_ROWS)
        scratch = operands.scratch(rows)
        dy_rows = dy[:, :rows]
        timings = {}
        for cfg in dict.fromkeys(map(runs_as, candidates)):
            try:
                timings[cfg] = triton.testing.do_bench(
                    lambda cfg=cfg: launch(cfg, scratch, rows, dy_rows), warmup=5, rep=20, return_mode="median"
                )
            except Exception as exc:  # out of resources on this device: not a candidate here
                if "resources" not in str(exc).lower() and "shared memory" not in str(exc).lower():
                    raise
        if not timings:
            raise RuntimeError(f"no tile config could launch for a {M}x{N} weight")
        best = min(timings, key=timings.get)
    _tuned[key, gluon] = best
    return best


def tuned_configs() -> dict[tuple, TileConfig]:
    """The tile configs chosen so far, by (shape key, ``gluon_enabled()``) (read-only view)."""
    return dict(_tuned)


def tuned_config(grad_output: torch.Tensor, weight: torch.Tensor, state: ForgeParamState) -> TileConfig | None:
    """The config the tuner chose for a fused step on these operands, if it ran."""
    return _tuned.get((_tune_key(grad_output.reshape(-1, weight.shape[0]), weight, state, None), gluon_enabled()))


# ---------------------------------------------------------------------------
# torch backend (the reference; what CPU training and CI run)
# ---------------------------------------------------------------------------

def reference_gradient(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """G = dY^T X in fp32 (the gradient the kernel keeps in registers)."""
    return dy.float().t() @ x.float()


def tile_ok_mask(g: torch.Tensor, tile: tuple[int, int]) -> torch.Tensor:
    """(tiles_m, tiles_n) bool: which tiles of ``g`` the kernel steps -- those whose
    fp32 sum of g^2 is finite (no NaN or Inf, no overflowing square)."""
    bm, bn = tile
    M, N = g.shape
    padded = torch.nn.functional.pad(g.float(), (0, -N % bn, 0, -M % bm))
    sumsq = padded.square().view(padded.shape[0] // bm, bm, padded.shape[1] // bn, bn).sum(dim=(1, 3))
    return torch.isfinite(sumsq)


def _expand_tiles(ok_tiles: torch.Tensor, tile: tuple[int, int], rows: int, cols: int, col_unit: int = 1):
    bm, bn = tile
    return ok_tiles.repeat_interleave(bm, 0)[:rows].repeat_interleave(bn // col_unit, 1)[:, :cols]


@torch.no_grad()
def _torch_step(dy, x, weight, state, hyper, telemetry, accumulated, grad_scale, config):
    tile = config.guard_tile if config is not None else TORCH_BACKEND_TILE
    M, N = weight.shape
    g = reference_gradient(dy, x)
    if accumulated is not None:
        g = accumulated.float() + g
    ok_tiles = tile_ok_mask(g, tile)
    ok = _expand_tiles(ok_tiles, tile, M, N)
    g = torch.where(ok, g, torch.zeros((), device=g.device))
    telemetry.sumsq += (g * g).sum()
    telemetry.nonfinite_tiles += (~ok_tiles).sum().to(torch.int32)
    if grad_scale is not None:
        g = g * grad_scale

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
        # (codes in whole blocks, in their stored order within a block: the tile mask still holds)
        _masked_copy_(slot.data, fresh.data, _expand_tiles(ok_tiles, tile, M, slot.data.shape[1]))
        if slot.scale is not None:
            ok_blocks = _expand_tiles(ok_tiles, tile, M, slot.scale.shape[1], col_unit=state.codec.block)
            _masked_copy_(slot.scale, fresh.scale, ok_blocks)


def _masked_copy_(dst: torch.Tensor, src: torch.Tensor, mask: torch.Tensor) -> None:
    """dst[mask] = src[mask], bit for bit (fp8 codes are moved as bytes)."""
    if dst.element_size() == 1:
        dst, src = dst.view(torch.uint8), src.view(torch.uint8)
    dst.copy_(torch.where(mask, src, dst))
