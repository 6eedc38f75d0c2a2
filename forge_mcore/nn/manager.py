"""``forge_mcore.patch(model)``: FORGE for any PyTorch model, and ``unpatch``.

Order of work, so that a refusal never leaves a half-patched model:

1. check the arguments and the model (refusals below), touching nothing;
2. run the probe forward (``probe.py``), which restores RNG and buffers;
3. decide, per parameter, fused or not and why;
4. allocate the engine state and build the fallback optimizer;
5. only then touch the model: swap the classes of the fused modules
   (``ForgeLinear``, fused ``Conv1D``, fused experts) and bind their sites.

A weight is fused when it belongs to an ``nn.Linear``, HF ``Conv1D`` or HF
3-D experts module, requires grad, and the probe saw that module called
exactly once with grad enabled and reading it, with no other reader.
Everything else trainable goes to the fallback optimizer.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..codecs import get_codec, get_weight_store
from ..engine import ForgeEngine
from ..ops import resolve_backend
from ..rules import get_rule
from .experts import EXPERT_PARAMS, fused_experts_class, is_fusable_experts
from .linear import FusedSite, _FusedLinearMixin, accumulate_grad_node, fused_class
from .loss import check_causal_lm, fuse_causal_lm_loss, unfuse_causal_lm_loss
from .optimizer import CLIP_MODES, ForgeOptimizer, PatchReport
from .probe import ModuleUse, probe_uses

_clip_warned = False


@dataclass
class _PatchRecord:
    """Kept on the patched model (``model._forge_patch``) so ``unpatch`` can undo the swaps."""

    modules: list[tuple[nn.Module, type, str]]  # (module, original class, bound attribute)
    optimizer: ForgeOptimizer | None = None
    fused_loss: bool = False


def patch(
    model: nn.Module,
    rule: str = "adamw",
    state_dtype: str = "bf16",
    *,
    lr: float | None = None,
    betas: tuple[float, float] | None = None,
    weight_decay: float | None = None,
    weight_store: str | None = None,
    clip: str | None = None,
    grad_accumulation: int = 1,
    accumulation_dtype: str = "fp32",
    on_nonfinite: str = "skip",
    fallback: Callable[[list[dict[str, Any]]], torch.optim.Optimizer] | None = None,
    exclude: str | Iterable[str] = (),
    no_weight_decay: str | Iterable[str] = (),
    probe_inputs: Any = None,
    allow_tf32: bool = False,
    backend: str | None = None,
    fused_loss: bool = False,
    loss_backend: str | None = None,
    **rule_kwargs: Any,
) -> ForgeOptimizer:
    """Fuse the optimizer step into the weight-gradient GEMM of ``model``'s linear layers.

    Call it after the model is on its device and in its training dtype, and
    before ``torch.compile``. Returns the optimizer to step.

    rule, lr, betas, weight_decay, **rule_kwargs: the optimizer rule and its
        hyperparameters (torch.optim names: eps, amsgrad, momentum ...); the
        fallback optimizer gets the same ones.
    state_dtype: ``"fp32"``, ``"bf16"``, ``"int8"`` or ``"fp8"`` optimizer state of fused weights.
    weight_store: how fused weights are written (default: their own dtype; see ``forge_mcore.codecs``).
    clip: ``"none"``, ``"exact"`` or ``"previous"`` (see ``ForgeOptimizer``); left unset,
        it means ``"none"`` and warns once, because ``torch.nn.utils.clip_grad_norm_``
        cannot see fused weights.
    grad_accumulation, accumulation_dtype: exact accumulation over that many
        backward passes per ``step()``, in an ``"fp32"`` or ``"bf16"`` buffer.
    on_nonfinite: ``"skip"`` non-finite gradient tiles (counted in ``nonfinite_report()``)
        or ``"raise"`` at ``step()``.
    fallback: builds the optimizer of the unfused parameters from a list of
        param-group dicts (e.g. ``torch.optim.AdamW`` or a lambda); default: the
        rule's torch.optim twin.
    exclude: ``fnmatch`` patterns of module names never to fuse: one (``"lm_head"``) or several.
    no_weight_decay: ``fnmatch`` patterns of parameter names (as ``model.named_parameters()``)
        stepped with ``weight_decay=0`` in groups of their own, fused or not: the usual
        recipe is ``("*bias", "*norm*")`` (HF Trainer's and megatron's). Patterns that
        together match no trainable parameter raise.
    probe_inputs: inputs of the probe forward: positional args (tuple), keyword
        args (dict), a tensor, or a callable ``f(model)`` that runs a forward.
        Default: tiny inputs built from an HF config, or ``model.example_inputs()``.
    fused_loss: an HF causal LM's training forward computes its loss with the LM head
        fused into it, in vocabulary blocks (``forge_mcore.nn.loss``): no logits tensor,
        ~1 GiB less peak per 512 tokens at Qwen3's vocabulary; the training forward then
        returns ``logits=None``. Forwards without labels or grad are unchanged.
    loss_backend: the fused loss's per-block work: ``"triton"`` (one kernel per block and
        direction) or ``"torch"`` (torch ops); default ``forge_mcore.nn.loss.DEFAULT_BACKEND``.
    """
    # 1. everything that can be checked without touching the model
    global _clip_warned
    if clip is None:
        if not _clip_warned:
            warnings.warn(
                "forge_mcore.patch(): fused weights are stepped inside backward and never get a .grad, so "
                "torch.nn.utils.clip_grad_norm_(model.parameters()) would silently skip them. No clipping runs; "
                "pass clip='none' to silence this, or clip='exact' / clip='previous' and call "
                "optimizer.clip_grad_norm_(max_norm)",
                UserWarning, stacklevel=2,
            )
            _clip_warned = True
        clip = "none"
    if clip not in CLIP_MODES:
        raise ValueError(f"clip must be one of {CLIP_MODES}, got {clip!r}")
    rule_obj = get_rule(rule)
    hparams = {k: v for k, v in dict(lr=lr, betas=betas, weight_decay=weight_decay).items() if v is not None}
    hparams.update(rule_kwargs)
    rule_obj.make_group(**hparams)  # unknown or bad hyperparameters raise here
    get_codec(state_dtype)
    if weight_store is not None:
        get_weight_store(weight_store)
    if fallback is None:
        fallback = rule_obj.torch_equivalent
        if fallback is None:
            raise ValueError(
                f"rule {rule_obj.name!r} has no torch.optim twin for the parameters FORGE does not fuse: "
                "pass fallback=<a callable taking a list of param-group dicts>"
            )
    engine = ForgeEngine(rule_obj, state_dtype, weight_store, grad_accumulation=grad_accumulation,
                         accumulation_dtype=accumulation_dtype, deferred=clip == "exact",
                         on_nonfinite=on_nonfinite, allow_tf32=allow_tf32, backend=backend)
    _refuse_unsupported(model)
    device = next(p.device for p in model.parameters() if p.requires_grad)
    resolve_backend(device, backend)  # a bad backend= raises here, not in the first backward
    exclude = _patterns("exclude", exclude)
    no_weight_decay = _patterns("no_weight_decay", no_weight_decay)
    if loss_backend is not None and not fused_loss:
        raise ValueError(f"loss_backend={loss_backend!r} is for the fused loss: pass fused_loss=True too")
    if fused_loss:
        check_causal_lm(model)
        if loss_backend not in (None, "torch", "triton"):
            raise ValueError(f"loss_backend must be 'torch', 'triton' or None, got {loss_backend!r}")
        if loss_backend is not None:
            try:
                resolve_backend(device, loss_backend)
            except ValueError as e:
                raise ValueError(f"loss_backend={loss_backend!r}: {e}") from None
        if weight_store is not None and get_weight_store(weight_store).stochastic:
            raise ValueError(f"fused_loss=True steps the LM head in row blocks, which weight_store={weight_store!r} "
                             "cannot (each block would reuse the same random bits): use 'bf16' or 'fp32_master'")

    # 2. the probe
    candidates = _candidates(model)
    usage = probe_uses(model, _probe_runner(model, probe_inputs), candidates)

    # 3. decisions
    report, plan, fallback_params, fallback_names = _decide(model, candidates, usage, exclude)

    # 4. state and the fallback optimizer (may raise; the model is still untouched)
    undecayed = _undecayed_names(no_weight_decay, report.fused + list(fallback_names.values()))
    groups = {True: engine.add_param_group(hparams)}  # decayed? -> engine group (the other made on first use)

    def group_of(name: str) -> dict:
        decayed = name not in undecayed
        if decayed not in groups:
            groups[decayed] = engine.add_param_group(hparams if decayed else {**hparams, "weight_decay": 0.0})
        return groups[decayed]

    bindings = []
    for mname, module, attrs in plan:
        bindings.append((module, _register(engine, group_of, mname, module, attrs)))
    fb = None
    if fallback_params:
        hp = {k: v for k, v in groups[True].items() if k != "params"}
        decayed = [p for p in fallback_params if fallback_names[id(p)] not in undecayed]
        quiet = [p for p in fallback_params if fallback_names[id(p)] in undecayed]
        fb = fallback([{"params": params, **hp, **extra}
                       for params, extra in ((decayed, {}), (quiet, {"weight_decay": 0.0})) if params])
        if not isinstance(fb, torch.optim.Optimizer):
            raise TypeError(f"fallback must build a torch.optim.Optimizer, got {type(fb).__name__}")
    optimizer = ForgeOptimizer(engine, fb, clip=clip, fallback_names=fallback_names, report=report, device=device)

    # 5. touch the model
    record = _PatchRecord(modules=[])
    for module, sites in bindings:
        original = type(module)
        if isinstance(sites, dict):
            module.__class__ = fused_experts_class(original)
            module._forge_sites = sites
            record.modules.append((module, original, "_forge_sites"))
        else:
            module.__class__ = fused_class(original)
            module._forge_site = sites
            record.modules.append((module, original, "_forge_site"))
    if fused_loss:
        fuse_causal_lm_loss(model, loss_backend)
        record.fused_loss = report.fused_loss = True
    record.optimizer = optimizer
    model._forge_patch = record
    return optimizer


def unpatch(model: nn.Module) -> None:
    """Restore the modules ``patch()`` changed to their own classes. The optimizer it
    returned stops working; the weights keep their trained values."""
    record = model.__dict__.get("_forge_patch")
    if record is None:
        raise ValueError("this model was not patched by forge_mcore.patch()")
    for module, original, attr in record.modules:
        module.__class__ = original
        module.__dict__.pop(attr, None)
    if record.fused_loss:
        unfuse_causal_lm_loss(model)
    if record.optimizer is not None:
        record.optimizer._close()
    del model._forge_patch


def _decide(model: nn.Module, candidates: dict[str, nn.Module], usage: dict[str, ModuleUse],
            exclude: tuple[str, ...]) -> tuple[PatchReport, list, list[torch.Tensor], dict[int, str]]:
    """Per parameter: fused or why not. Returns (report, [(module name, module, fused
    attributes)], fallback parameters, {id(fallback parameter): name})."""
    names_of: dict[int, list[str]] = defaultdict(list)
    for name, p in model.named_parameters(remove_duplicate=False):
        names_of[id(p)].append(name)
    report = PatchReport()
    fused_ids: set[int] = set()
    plan: list[tuple[str, nn.Module, list[str]]] = []  # (module name, module, fused attributes)
    for mname, module in candidates.items():
        if any(fnmatch.fnmatchcase(mname, pat) for pat in exclude):
            why = {a: "excluded by patch(exclude=...)" for a, _ in module.named_parameters(recurse=False)}
        else:
            why = _verdicts(module, usage[mname], names_of, experts=is_fusable_experts(module))
        fused = [a for a, reason in why.items() if reason is None]
        for attr, reason in why.items():
            param = getattr(module, attr)
            if reason is None:
                fused_ids.add(id(param))
                report.fused.append(names_of[id(param)][0])
                report.fused_numel += param.numel()
            else:
                report.not_fused[names_of[id(param)][0]] = reason
        if fused:
            plan.append((mname, module, fused))

    fallback_params, fallback_names, seen = [], {}, set()
    for name, p in model.named_parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        if p.requires_grad:
            report.trainable_numel += p.numel()
        if id(p) in fused_ids:
            continue
        if p.requires_grad:
            fallback_params.append(p)
            fallback_names[id(p)] = name
            report.not_fused.setdefault(name, "not a Linear, Conv1D or experts weight")
        else:
            report.not_fused[name] = "frozen (requires_grad=False)"
    return report, plan, fallback_params, fallback_names


# ---------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------

def _refuse_unsupported(model: nn.Module) -> None:
    """Raise, naming what to change, for what patch() cannot do yet."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"patch() takes an nn.Module, got {type(model).__name__}")
    modules = list(model.modules())
    if "_forge_patch" in model.__dict__ or any(
        getattr(m, "_forge_site", None) is not None or getattr(m, "_forge_sites", None) is not None for m in modules
    ):
        raise RuntimeError(
            "this model (or a module inside it) is already patched: keep using the optimizer the first "
            "patch() returned, or call forge_mcore.unpatch(model) before patching again"
        )
    if isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
        raise RuntimeError(
            f"patch() got a model wrapped in {type(model).__name__}: FORGE under data parallelism needs the "
            "coordinator (not available yet). Patch the unwrapped single-GPU model and do not wrap it"
        )
    if torch.distributed.is_available():
        from torch.distributed.fsdp import FullyShardedDataParallel
        from torch.distributed.tensor import DTensor

        fsdp2 = getattr(torch.distributed.fsdp, "FSDPModule", ())
        if any(isinstance(m, (FullyShardedDataParallel, fsdp2)) for m in modules) or any(
            isinstance(p, DTensor) for p in model.parameters()
        ):
            raise RuntimeError(
                "patch() got an FSDP-sharded model: the fully sharded FORGE mode needs the coordinator "
                "(not available yet). Patch the unsharded single-GPU model instead"
            )
    world = torch.distributed.get_world_size() if (
        torch.distributed.is_available() and torch.distributed.is_initialized()) else 1
    world = max(world, int(os.environ.get("WORLD_SIZE", "1") or 1))
    if world > 1:
        raise RuntimeError(
            f"patch() runs on one process, but the world size is {world}: under data parallelism each rank's "
            "gradient is partial and must be reduced before the fused step (the coordinator, not available yet). "
            "Run single-process (unset WORLD_SIZE / do not launch with torchrun)"
        )
    if isinstance(model, torch._dynamo.eval_frame.OptimizedModule) or any(
        getattr(m, "_compiled_call_impl", None) is not None for m in modules
    ):
        raise RuntimeError(
            "patch() got a torch.compile'd model: compiled graphs would keep the unfused backward. "
            "Call forge_mcore.patch(model) first, then torch.compile(model) (the fused layers then stay eager)"
        )
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("patch() found no trainable parameter (every parameter has requires_grad=False)")
    fp16 = [n for n, p in trainable if p.dtype == torch.float16]
    if fp16:
        raise TypeError(
            f"patch() does not support float16 weights ({fp16[:3]}...): fp16 needs a GradScaler, whose skipped "
            "steps cannot be honoured once fused layers have stepped inside backward. Use model.to(torch.bfloat16), "
            "or fp32 weights under torch.autocast(dtype=torch.bfloat16)"
        )
    devices = {p.device for _, p in trainable}
    if len(devices) > 1:
        raise RuntimeError(
            f"patch() found trainable parameters on several devices ({sorted(map(str, devices))}); "
            "put the model on one device (no device_map) before patching"
        )


# ---------------------------------------------------------------------------
# candidates and verdicts
# ---------------------------------------------------------------------------

def _hf_conv1d() -> type | None:
    if "transformers" not in sys.modules:
        return None
    from transformers.pytorch_utils import Conv1D

    return Conv1D


def _candidates(model: nn.Module) -> dict[str, nn.Module]:
    """Modules whose weights the fused step can own: exact ``nn.Linear`` (a subclass may
    read its weight differently), HF ``Conv1D`` and HF 3-D experts."""
    conv1d = _hf_conv1d()
    linear_types = {nn.Linear} | ({conv1d} if conv1d is not None else set())
    out = {}
    for name, m in model.named_modules():
        bases = type(m).__bases__
        base = bases[-1] if bases[0] is _FusedLinearMixin else type(m)  # ForgeLinear counts as nn.Linear
        if base in linear_types or is_fusable_experts(m):
            out[name] = m
    return out


def _verdicts(module: nn.Module, use: ModuleUse, names_of: dict[int, list[str]], *, experts: bool
              ) -> dict[str, str | None]:
    """{attribute: None (fuse) or why not} for the module's direct parameters."""
    why: dict[str, str | None] = {}
    for attr, p in module.named_parameters(recurse=False):
        uses, own = use.uses.get(attr, 0), use.own_uses.get(attr, 0)
        if not p.requires_grad:
            why[attr] = "frozen (requires_grad=False)"
        elif len(names_of[id(p)]) > 1:
            why[attr] = f"shared with {', '.join(names_of[id(p)][1:3])} (tied weight)"
        elif p.dtype not in (torch.float32, torch.bfloat16) or not p.is_contiguous():
            layout = "" if p.is_contiguous() else " non-contiguous"
            why[attr] = f"a {p.dtype}{layout} tensor (the fused step needs contiguous fp32 or bf16)"
        elif use.detached_saves.get(attr):
            why[attr] = ("read outside autograd (.detach() or .data) where a backward keeps (or may keep) it, "
                         "which would read it after its fused step")
        elif use.calls == 0:
            why[attr] = ("bypassed: read outside Module.forward" if uses else
                         "not used in the probe forward" if not use.no_grad_calls else
                         "called only under no_grad in the probe (reentrant checkpointing? patch() before enabling it)")
        elif use.calls > 1:
            why[attr] = f"module called {use.calls} times per forward"
        elif uses != own:
            why[attr] = f"read {uses - own} more time(s) outside its module (tied or functional use)"
        elif own != 1 and not experts:
            why[attr] = f"read {own} times by its module"
        else:
            why[attr] = None
    if experts and any(why.get(a) is not None for a in EXPERT_PARAMS):  # both or neither
        first = next(why[a] for a in EXPERT_PARAMS if why.get(a) is not None)
        why = {a: (r if r is not None else f"its sibling expert tensor is not fused ({first})") for a, r in why.items()}
    if not experts and "bias" in why and why["bias"] is None and why["weight"] is not None:
        why["bias"] = "its layer's weight is not fused"
    return why


def _patterns(argument: str, value: str | Iterable[str]) -> tuple[str, ...]:
    patterns = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(pattern, str) for pattern in patterns):
        raise TypeError(f"{argument} must be a name pattern or a list of them, got {patterns!r}")
    return patterns


def _undecayed_names(patterns: tuple[str, ...], names: list[str]) -> set[str]:
    """The parameter names ``no_weight_decay`` selects. Patterns that together select none are a
    typo (one alone may be a model without biases)."""
    selected = {n for n in names if any(fnmatch.fnmatchcase(n, pattern) for pattern in patterns)}
    if patterns and not selected:
        raise ValueError(f"no_weight_decay={list(patterns)} matches no trainable parameter "
                         f"(names as in model.named_parameters(): {names[:4]}...)")
    return selected


def _register(engine: ForgeEngine, group_of: Callable[[str], dict], mname: str, module: nn.Module,
              attrs: list[str]) -> FusedSite | dict[str, list[FusedSite]]:
    """Allocate the engine state of a module's fused parameters (each in ``group_of(its name)``);
    return what its forward binds."""
    prefix = f"{mname}." if mname else ""
    if is_fusable_experts(module):
        sites = {}
        for attr in attrs:
            p = getattr(module, attr)
            # step_when_unused: an expert no token reached still decays (paper Remark 1)
            node, group = accumulate_grad_node(p), group_of(f"{prefix}{attr}")
            sites[attr] = [FusedSite(engine, engine.manage(f"{prefix}{attr}[{e}]", p.data[e], p, group,
                                                           step_when_unused=True, honours_requires_grad=True),
                                     index=e, grad_node=node)
                           for e in range(p.shape[0])]
        return sites
    weight = engine.manage(f"{prefix}weight", module.weight.data, module.weight, group_of(f"{prefix}weight"),
                           transposed=not isinstance(module, nn.Linear), honours_requires_grad=True)
    bias = None
    if "bias" in attrs:
        bias = engine.manage(f"{prefix}bias", module.bias.data.view(-1, 1), module.bias, group_of(f"{prefix}bias"),
                             honours_requires_grad=True)
    return FusedSite(engine, weight, bias, grad_node=accumulate_grad_node(module.weight),
                     bias_grad_node=accumulate_grad_node(module.bias) if bias is not None else None)


def _probe_runner(model: nn.Module, probe_inputs: Any) -> Callable[[], Any]:
    if callable(probe_inputs):
        return lambda: probe_inputs(model)
    if probe_inputs is None:
        probe_inputs = _default_probe_inputs(model)
    if isinstance(probe_inputs, dict):
        return lambda: model(**probe_inputs)
    if isinstance(probe_inputs, (tuple, list)):
        return lambda: model(*probe_inputs)
    return lambda: model(probe_inputs)


def _default_probe_inputs(model: nn.Module) -> Any:
    param = next(model.parameters())
    if callable(getattr(model, "example_inputs", None)):
        return model.example_inputs()
    config = getattr(model, "config", None)
    kind = getattr(model, "main_input_name", None)
    if config is not None and kind == "input_ids":
        vocab = getattr(config, "vocab_size", None) or config.get_text_config().vocab_size
        return {"input_ids": (torch.arange(1, 9, device=param.device) % vocab).view(1, 8)}
    if config is not None and kind == "pixel_values":
        size = config.image_size if isinstance(config.image_size, int) else tuple(config.image_size)[0]
        dtype = param.dtype if param.is_floating_point() else torch.float32
        return {"pixel_values": torch.zeros(1, config.num_channels, size, size, device=param.device, dtype=dtype)}
    raise ValueError(
        "patch() runs one probe forward to count how often each weight is read: pass probe_inputs= (a tuple of "
        "positional args, a dict of keyword args, or a callable f(model) running one forward)"
    )
