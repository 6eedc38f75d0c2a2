"""``ForgeOptimizer``: the one object a ``patch()`` user steps.

It is a ``torch.optim.Optimizer`` over two halves:

* the engine's groups, whose weights were already stepped inside backward
  (``step()`` only finishes the iteration: unused experts, deferred steps,
  the non-finite guard);
* a standard torch optimizer (the fallback) for every parameter FORGE did not
  fuse, stepped here from its ``.grad``.

``param_groups`` is the concatenation of both halves' group dicts (the same
objects), so ``torch.optim.lr_scheduler`` edits reach the fallback at
``step()`` and the engine when the next backward starts.

Clipping is a mode chosen at ``patch()`` (``clip=``), because a fused weight
is updated before the global norm exists (regime 4):

* ``"none"``: no clipping; ``clip_grad_norm_`` raises.
* ``"exact"``: the engine runs deferred; each fused gradient is materialized
  in fp32 during backward and stepped at ``step()`` with the coefficient from
  ``clip_grad_norm_``: exactly ``torch.nn.utils.clip_grad_norm_``, without
  FORGE's gradient-memory saving.
* ``"previous"``: the coefficient computed by ``clip_grad_norm_(max_norm)`` at
  step t, min(1, max_norm / (||g_t|| + 1e-6)), scales the gradients of step
  t + 1 (fused weights inside their backward, fallback parameters at
  ``step()``); step 1, and any step whose predecessor did not call
  ``clip_grad_norm_``, is unclipped. No extra memory; a spike is clipped one
  step late.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..engine import ForgeEngine

CLIP_MODES = ("none", "exact", "previous")
_FORMAT = "forge_mcore.patch/1"


def _size(nbytes: int) -> str:
    """Bytes in the largest binary unit that keeps the number at least 1 (KiB at least)."""
    unit, value = "KiB", nbytes / 2**10
    for bigger in ("MiB", "GiB", "TiB"):
        if value < 1024:
            break
        unit, value = bigger, value / 1024
    return f"{value:,.1f} {unit}"


@dataclass
class PatchReport:
    """What ``patch()`` decided, per parameter (names as in ``model.named_parameters()``).

    fused: names of the parameters stepped inside backward.
    not_fused: {name: why} for every other parameter (frozen ones included).
    fused_numel / trainable_numel: element counts (each shared tensor counted once).
    fused_loss: the model's training forward computes its loss with the LM head fused into it
        (``patch(fused_loss=True)``; no logits tensor).
    """

    fused: list[str] = field(default_factory=list)
    not_fused: dict[str, str] = field(default_factory=dict)
    fused_numel: int = 0
    trainable_numel: int = 0
    fused_loss: bool = False

    @property
    def coverage(self) -> float:
        """Fraction of the trainable parameters stepped by the fused kernel."""
        return self.fused_numel / self.trainable_numel if self.trainable_numel else 0.0


class ForgeOptimizer(torch.optim.Optimizer):
    """Returned by ``forge_mcore.patch()``; see the module docstring.

    step(), zero_grad(), param_groups, state_dict()/load_state_dict() behave as
    torch's. Extras: ``clip_grad_norm_`` (honours the clip mode),
    ``grad_norm()`` / ``grad_norms()`` / ``nonfinite_report()`` (telemetry of
    the last finished step) and ``summary()``.
    """

    # GradScaler.step() then calls step() directly, which refuses it (see step()).
    _step_supports_amp_scaling = True

    def __init__(self, engine: ForgeEngine, fallback: torch.optim.Optimizer | None, *, clip: str,
                 fallback_names: dict[int, str], report: PatchReport, device: torch.device) -> None:
        if clip not in CLIP_MODES:
            raise ValueError(f"clip must be one of {CLIP_MODES}, got {clip!r}")
        self.engine = engine
        self.fallback = fallback
        self.clip = clip
        self.report = report
        self._fallback_names = fallback_names
        self._device = device
        self._scale: torch.Tensor | None = None  # clip coefficient applied in this iteration
        self._next_scale: torch.Tensor | None = None  # "previous": the one for the next iteration
        # (names, per-tensor sum of squares) of the last step's fallback gradients; made a
        # dict of norms only when asked (per_tensor_norms), so step() needs no host sync for it.
        self._last_fallback: tuple[list[str], torch.Tensor | None] = ([], None)
        self._last_fallback_sumsq = torch.zeros((), device=device)
        self._last_skipped: dict[str, int] = {}
        self._closed = False
        defaults = {k: v for k, v in engine.param_groups[0].items() if k != "params"}
        super().__init__(self._all_groups(), defaults)
        self._ready = True

    def _all_groups(self) -> list[dict[str, Any]]:
        return list(self.engine.param_groups) + (list(self.fallback.param_groups) if self.fallback else [])

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if getattr(self, "_ready", False):  # the fused set was fixed by patch()'s probe
            raise RuntimeError("parameters cannot be added to a FORGE optimizer: make them trainable before patch()")
        super().add_param_group(param_group)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this optimizer's model was unpatched (forge_mcore.unpatch); patch() it again")

    # ---- fallback half --------------------------------------------------------------
    def _fallback_grads(self) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        if self.fallback is None:
            return [], []
        params = [p for g in self.fallback.param_groups for p in g["params"] if p.grad is not None]
        return params, [p.grad for p in params]

    @staticmethod
    def _sumsq(grads: list[torch.Tensor]) -> torch.Tensor | None:
        """Per-tensor sum of squares in fp32 (one fused kernel per device and dtype)."""
        if not grads:
            return None
        return torch.stack(torch._foreach_norm(grads, 2, dtype=torch.float32)).square()

    def _fused_sumsq(self) -> torch.Tensor:
        """Per fused weight, the sum of g^2 of its current gradient (exact: materialized; else from
        the kernel, whose skipped tiles it leaves out), before any clip coefficient."""
        if not self.engine.managed:
            return torch.zeros(1, device=self._device)
        return self.engine.per_tensor_sumsq()

    # ---- the step ------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Finish the iteration: the engine's end-of-step work, then the fallback optimizer."""
        self._check_open()
        if getattr(self, "found_inf", None) is not None:  # set by GradScaler.step()
            raise RuntimeError(
                "GradScaler is not supported with FORGE: fused weights step inside backward, so a step the "
                "scaler skips has already happened. Train in bf16 (torch.autocast(dtype=torch.bfloat16)) "
                "without a GradScaler"
            )
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        params, grads = self._fallback_grads()
        sumsq = self._sumsq(grads)
        bad: list[int] = []
        if sumsq is not None:
            finite = torch.isfinite(sumsq)
            if not bool(finite.all()):  # one host sync per step, only to learn which tensors to skip
                bad = [i for i, ok in enumerate(finite.tolist()) if not ok]
        skipped = {self._fallback_names[id(params[i])]: 1 for i in bad}
        try:  # raises on missing micro-batches (before anything), or on non-finite fused tiles under "raise"
            self.engine.step()
        except FloatingPointError:
            self._end_iteration(params, sumsq, skipped)  # the fused weights' iteration is over
            raise
        if skipped and self.engine.on_nonfinite == "raise":
            self._end_iteration(params, sumsq, skipped)
            raise FloatingPointError(
                f"non-finite gradients in {len(skipped)} fallback tensor(s), nothing stepped in the fallback "
                f"optimizer: {sorted(skipped)[:5]}")
        for i in bad:
            params[i].grad = None  # torch optimizers leave a parameter without a gradient untouched
        dropped = set(bad)
        good = [g for i, g in enumerate(grads) if i not in dropped]
        if self._scale is not None and good:
            torch._foreach_mul_(good, self._scale.to(good[0].device).reshape(()))
        if self.fallback is not None:
            self.fallback.step()
        self._end_iteration(params, sumsq, skipped)
        return loss

    def _end_iteration(self, params: list[torch.Tensor], sumsq: torch.Tensor | None, skipped: dict[str, int]) -> None:
        """The last step's telemetry; the clip coefficient of the next iteration."""
        if sumsq is not None:
            sumsq = sumsq.masked_fill(~torch.isfinite(sumsq), 0.0)
            self._last_fallback_sumsq = sumsq.sum()
            self._last_fallback = ([self._fallback_names[id(p)] for p in params], sumsq)
        else:
            self._last_fallback_sumsq, self._last_fallback = torch.zeros((), device=self._device), ([], None)
        self._last_skipped = skipped
        self._scale, self._next_scale = (self._next_scale if self.clip == "previous" else None), None
        self.engine.grad_scale = self._scale

    def zero_grad(self, set_to_none: bool = True) -> None:
        """torch's ``zero_grad`` for the fallback parameters; for the fused weights, the gradients
        of this iteration not yet stepped (``clip="exact"``, earlier micro-batches) are dropped."""
        super().zero_grad(set_to_none)
        self.engine.zero_grad()
        if self.clip == "exact":
            self._scale = self.engine.grad_scale = None  # a coefficient of the discarded gradients

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        """The global gradient norm (fused and fallback parameters), and clipping by the mode
        chosen at ``patch()``. Call it between backward and ``step()``.

        As torch's, a second call in one iteration sees the gradients the first clipped, and
        multiplies its coefficient in. A non-finite gradient (a skipped fused tile, a skipped
        fallback tensor) does not enter the coefficient: it is computed from the gradients that
        are applied, so one bad batch cannot make every later step NaN. The returned norm counts
        everything, so it shows the bad batch. In ``"exact"`` mode a fused weight with a
        non-finite gradient is left out whole (its tiles are skipped at ``step()``)."""
        self._check_open()
        if float(norm_type) != 2.0:
            raise ValueError(f"only norm_type=2 is supported (FORGE's telemetry is a sum of squares), got {norm_type}")
        if self.clip == "none":
            raise RuntimeError(
                "patch(..., clip='none') was chosen, so nothing can clip the fused weights. Pass clip='exact' "
                "(exact global norm; fused gradients are materialized) or clip='previous' (the previous step's "
                "norm; no extra memory) to forge_mcore.patch()"
            )
        _, grads = self._fallback_grads()
        fallback = self._sumsq(grads)
        fused = self._fused_sumsq()
        total, applied = fused.sum().to(self._device), fused.nan_to_num(0.0, 0.0, 0.0).sum().to(self._device)
        if fallback is not None:
            total = total + fallback.sum().to(self._device)
            applied = applied + fallback.nan_to_num(0.0, 0.0, 0.0).sum().to(self._device)
        earlier = self._scale if self.clip == "exact" else self._next_scale  # this iteration's earlier calls
        if earlier is not None:  # the norm of the gradients as those calls left them
            total, applied = total * earlier.reshape(()).square(), applied * earlier.reshape(()).square()
        if self.clip != "exact":  # the kernels' telemetry leaves skipped tiles out: the norm shows them
            total = torch.where(self.engine.nonfinite_tiles().sum().to(self._device) > 0, float("inf"), total)
        total, applied = total.sqrt(), applied.sqrt()
        coef = torch.clamp(max_norm / (applied + 1e-6), max=1.0).reshape(1).float()
        if earlier is not None:
            coef = coef * earlier
        if self.clip == "exact":
            self._scale = self.engine.grad_scale = coef
        else:
            self._next_scale = coef
        return total

    # ---- telemetry ---------------------------------------------------------------
    def grad_norm(self) -> torch.Tensor:
        """Global L2 norm of the last finished step's gradient (before clipping; device scalar, no sync)."""
        fused = self.engine.grad_sumsq(current=False).to(self._device)
        return (fused + self._last_fallback_sumsq).sqrt()

    def grad_norms(self) -> dict[str, float]:
        """{name: ||g||_2} of the last finished step, fused weights and fallback tensors (host sync)."""
        names, sumsq = self._last_fallback
        fallback = dict(zip(names, sumsq.sqrt().tolist())) if sumsq is not None else {}
        return {**self.engine.per_tensor_norms(), **fallback}

    def nonfinite_report(self) -> dict[str, int]:
        """{name: count} of the last finished step: tiles skipped in a fused weight, 1 for a
        fallback tensor skipped whole. Empty when every gradient was finite."""
        return {**self.engine.nonfinite_report(), **self._last_skipped}

    # ---- persistence ---------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """FORGE's own format (not torch's ``state``/``param_groups`` layout); the optimizer's
        ``register_state_dict_pre_hook``/``post_hook`` run as torch's do."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        state_dict = {
            "format": _FORMAT,
            "engine": self.engine.state_dict(),
            "engine_groups": [{k: v for k, v in g.items() if k != "params"} for g in self.engine.param_groups],
            "fallback": self.fallback.state_dict() if self.fallback is not None else None,
            "clip": self.clip,
            "clip_scale": self._scale,
        }
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            state_dict = post_hook(self, state_dict) or state_dict
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load ``state_dict()``'s output; ``register_load_state_dict_pre_hook``/``post_hook`` run as torch's do."""
        self._check_open()
        if isinstance(state_dict, dict):
            state_dict = state_dict.copy()  # shallow, as torch's: a pre-hook may edit it
            for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
                state_dict = pre_hook(self, state_dict) or state_dict
        if not isinstance(state_dict, dict) or state_dict.get("format") != _FORMAT:
            raise ValueError("not a FORGE optimizer state_dict (expected one from ForgeOptimizer.state_dict())")
        if state_dict["clip"] != self.clip:
            raise ValueError(
                f"state_dict was saved with clip={state_dict['clip']!r}, this optimizer uses {self.clip!r}")
        if (state_dict["fallback"] is None) != (self.fallback is None):
            raise ValueError("state_dict and this optimizer disagree on whether there is a fallback optimizer")
        if len(state_dict["engine_groups"]) != len(self.engine.param_groups):
            raise ValueError("state_dict has a different number of FORGE parameter groups")
        if self.fallback is not None:  # checked before the engine loads anything (torch's own checks)
            saved = [len(g["params"]) for g in state_dict["fallback"]["param_groups"]]
            mine = [len(g["params"]) for g in self.fallback.param_groups]
            if saved != mine:
                raise ValueError(f"state_dict's fallback optimizer has groups of {saved} parameters, this one "
                                 f"{mine}: patch() the model as it was when saved (exclude=, no_weight_decay=)")
        self.engine.load_state_dict(state_dict["engine"])
        for group, saved in zip(self.engine.param_groups, state_dict["engine_groups"]):
            group.update(saved)
        if self.fallback is not None:
            self.fallback.load_state_dict(state_dict["fallback"])
        self.param_groups = self._all_groups()  # torch's load_state_dict builds new group dicts
        scale = state_dict["clip_scale"]
        self._scale = scale.to(self._device) if scale is not None else None
        self.engine.grad_scale = self._scale if self.clip == "previous" else None
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- reporting -----------------------------------------------------------------
    def summary(self) -> str:
        """Human-readable account of what was fused, what was not and why, and what it saves."""
        r, e = self.report, self.engine
        lines = [
            f"FORGE: rule {e.rule.name}, {e.state_dtype} states, clip={self.clip!r}, "
            f"on_nonfinite={e.on_nonfinite!r}, grad_accumulation={e.grad_accumulation}",
            f"fused: {len(r.fused)} tensors, {r.fused_numel:,} of {r.trainable_numel:,} trainable parameters "
            f"(coverage {100 * r.coverage:.1f}%)",
        ]
        if self.clip == "exact":
            lines.append("gradient memory saved: none -- clip='exact' materializes every fused gradient in fp32 "
                         "for the global norm (regime 4)")
        else:
            saved = e.gradient_bytes_saved()
            if e.grad_accumulation == 1:
                lines.append(f"gradient bytes never allocated: {_size(saved)}")
            else:
                buffers = sum(h.weight.numel() for h in e.managed) * (4 if e.accumulation_dtype == "fp32" else 2)
                lines.append(f"gradient bytes never allocated: {_size(saved)}; the "
                             f"{e.accumulation_dtype} accumulation buffers of grad_accumulation={e.grad_accumulation} "
                             f"take {_size(buffers)} (net {'+' if saved >= buffers else '-'}"
                             f"{_size(abs(saved - buffers))})")
        lines.append(f"optimizer state of fused weights: {_size(e.state_nbytes())}")
        if r.fused_loss:
            lines.append("loss: LM head and cross-entropy fused, in vocabulary blocks (no logits tensor; the training "
                         "forward returns logits=None)")
        fallback = type(self.fallback).__name__ if self.fallback is not None else "none"
        lines.append(f"fallback optimizer: {fallback}, {len(self._fallback_names)} tensors")
        by_reason: dict[str, list[str]] = {}
        for name, why in r.not_fused.items():
            by_reason.setdefault(why, []).append(name)
        if by_reason:
            lines.append("not fused:")
        for why, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(names[:4]) + (f", ... (+{len(names) - 4})" if len(names) > 4 else "")
            lines.append(f"  {why}: {shown}")
        return "\n".join(lines)

    def _close(self) -> None:
        self._closed = True
