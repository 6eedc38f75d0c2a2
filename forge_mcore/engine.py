"""The engine behind every placement: groups, managed weights, telemetry, micro-batches.

Placements (``nn.ForgeLinear``, the megatron linears, later the coordinator)
only call ``engine.backward(handle, dY, X)`` from their autograd backward; the
object the user steps (``patch()``'s optimizer, the megatron optimizer member)
calls ``engine.step()``. Everything in between lives here, once:

* hyperparameter groups in torch's format (``param_groups``), read when each
  backward starts, so ``torch.optim.lr_scheduler`` works unchanged;
* one ``ForgeParamState`` per managed 2-D weight (a linear weight, one expert of
  a 3-D expert tensor, a bias seen as an (out, 1) matrix);
* per-tensor telemetry: sum of g^2 and non-finite tiles, on device, no sync;
* exact gradient accumulation over micro-batches: micro-batches 1..n-1 add
  dY^T X into an fp32 or bf16 buffer, micro-batch n runs the fused step on
  buffer + its own dY^T X (the mechanism pipeline schedules reuse);
* the deferred mode (regime 4): every gradient is materialized during backward
  and stepped at ``step()`` with a global scale -- exact global-norm clipping.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from . import ops
from .param_state import ForgeParamState, PendingStep, copy_scalars_to_device
from .rules import Rule, get_rule

ACCUMULATION_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


@dataclass(eq=False)
class ManagedWeight:
    """One fused 2-D weight: where it lives, its state, its group, its telemetry slot.

    weight: the (out, in) contiguous tensor the kernel updates (a view of the
        parameter: the parameter itself, one expert of a 3-D tensor, or a bias
        viewed as (out, 1)).
    param: the ``nn.Parameter`` it belongs to (what state dicts and users see).
    transposed: the parameter stores W^T (HF GPT-2 ``Conv1D``); the backward then
        passes (X, dY) instead of (dY, X) so the kernel steps W^T directly.
    step_when_unused: apply the gradient-free part of the rule at ``step()`` if no
        backward reached this weight (an expert no token was routed to; paper Remark 1),
        unless it ``honours_requires_grad`` and its parameter no longer requires grad.
    honours_requires_grad: the parameter's ``requires_grad`` says whether it trains (a torch
        model's, ``patch()``; megatron's FORGE layers keep it off by design): frozen, it
        gets no gradient-free step, as torch's optimizers skip a parameter without a gradient.
    grad_scale: a constant factor in this weight's gradient, applied in the kernel
        (megatron's DDP averages expert gradients over the data-parallel size); a
        1-element fp32 tensor on the weight's device, or None. Telemetry reports
        the gradient before it.
    """

    name: str
    weight: torch.Tensor
    param: torch.nn.Parameter
    state: ForgeParamState
    group: dict
    index: int
    transposed: bool = False
    step_when_unused: bool = False
    grad_scale: torch.Tensor | None = None
    honours_requires_grad: bool = False
    accum: torch.Tensor | None = None
    micro_batches: int = 0
    stepped_iteration: int = -1
    param_version: int = -1  # param._version when the master last matched the weight
    hyper: torch.Tensor | None = field(default=None, repr=False)
    pending: PendingStep | None = field(default=None, repr=False)
    telemetry: ops.StepTelemetry | None = field(default=None, repr=False)
    row_views: dict = field(default_factory=dict, repr=False)  # (start, stop) -> (weight rows, state view)

    def rows(self, start: int, stop: int) -> tuple[torch.Tensor, ForgeParamState]:
        """(weight rows, state view) of rows [start, stop), made once: a fused step's launch
        is replayed only for the same weight and state objects."""
        view = self.row_views.get((start, stop))
        if view is None:
            if len(self.row_views) >= 256:  # blocks follow the token count: a long-lived run of many shapes
                self.row_views.clear()
            view = self.row_views[(start, stop)] = (self.weight[start:stop], self.state.row_view(start, stop))
        return view


class ForgeEngine:
    """Owns the fused weights of one model (see the module docstring).

    rule, state_dtype, weight_store: as ``ForgeParamState.create``.
    grad_accumulation: micro-batches per optimizer step (1: step in every backward).
    accumulation_dtype: ``"fp32"`` or ``"bf16"`` buffer for micro-batches 1..n-1.
    deferred: materialize every gradient during backward and step at ``step()``
        (regime 4: needed by exact global-norm clipping).
    on_nonfinite: ``"skip"`` (count skipped tiles) or ``"raise"`` at ``step()``.
    """

    def __init__(
        self,
        rule: str | Rule = "adamw",
        state_dtype: str = "bf16",
        weight_store: str | None = None,
        *,
        grad_accumulation: int = 1,
        accumulation_dtype: str = "fp32",
        deferred: bool = False,
        on_nonfinite: str = "skip",
        allow_tf32: bool = False,
        backend: str | None = None,
    ) -> None:
        self.rule = get_rule(rule)
        self.state_dtype = state_dtype
        self.weight_store = weight_store
        if not isinstance(grad_accumulation, int) or grad_accumulation < 1:
            raise ValueError(f"grad_accumulation must be an int >= 1, got {grad_accumulation!r}")
        if accumulation_dtype not in ACCUMULATION_DTYPES:
            raise ValueError(
                f"accumulation_dtype must be one of {sorted(ACCUMULATION_DTYPES)}, got {accumulation_dtype!r}"
            )
        if on_nonfinite not in ("skip", "raise"):
            raise ValueError(f"on_nonfinite must be 'skip' or 'raise', got {on_nonfinite!r}")
        self.grad_accumulation = grad_accumulation
        self.accumulation_dtype = accumulation_dtype
        self.deferred = deferred
        self.on_nonfinite = on_nonfinite
        self.allow_tf32 = allow_tf32
        self.backend = backend
        self.param_groups: list[dict[str, Any]] = []
        self.managed: list[ManagedWeight] = []
        self.iteration = 0
        self._sumsq: torch.Tensor | None = None
        self._nonfinite: torch.Tensor | None = None
        self._hyper: torch.Tensor | None = None  # (weights, scalars): every weight's per-step scalars
        self._prepared_iteration = -1
        self.grad_scale: torch.Tensor | None = None  # set by a clipping mode
        # What a second backward before step() is told to do (a placement names its own arguments)
        self.accumulation_advice = ("For gradient accumulation over micro-batches pass "
                                    "grad_accumulation=<micro-batches> (exact accumulation)")
        self.last_sumsq: torch.Tensor | None = None
        self.last_nonfinite: torch.Tensor | None = None
        self.backward_since_step = False  # whether a backward reached a weight since the last step()

    # ---- registration --------------------------------------------------------
    def add_param_group(self, hparams: dict[str, Any] | None = None) -> dict[str, Any]:
        """A new torch-style group (rule defaults overlaid with ``hparams``); weights join it via ``manage``."""
        group = self.rule.make_group(**(hparams or {}))
        group["params"] = []
        self.param_groups.append(group)
        return group

    def manage(
        self,
        name: str,
        weight: torch.Tensor,
        param: torch.nn.Parameter,
        group: dict[str, Any],
        *,
        transposed: bool = False,
        step_when_unused: bool = False,
        weight_store: str | None = None,
        grad_scale: float | None = None,
        honours_requires_grad: bool = False,
    ) -> ManagedWeight:
        """Allocate optimizer state for ``weight`` (2-D, contiguous) and return its handle.

        ``group`` may carry keys other than the rule's hyperparameters (a scheduler's
        bookkeeping: torch's ``initial_lr``, megatron's ``max_lr`` / ``wd_mult``); the
        rule reads only its own.
        """
        if not any(g is group for g in self.param_groups):
            raise ValueError("group must come from add_param_group()")
        if weight.dim() != 2 or not weight.is_contiguous():
            raise ValueError(f"{name}: a managed weight must be a contiguous 2-D tensor, got {tuple(weight.shape)}")
        if self._sumsq is not None:
            raise RuntimeError("manage() after the first backward: register every weight before training starts")
        if grad_scale is not None and not (isinstance(grad_scale, (int, float)) and math.isfinite(grad_scale)
                                           and grad_scale > 0):
            raise ValueError(f"{name}: grad_scale must be a finite number > 0, got {grad_scale!r}")
        hparams = {k: group[k] for k in self.rule.defaults}
        state = ForgeParamState.create(weight, self.rule, hparams, self.state_dtype,
                                       weight_store or self.weight_store)
        scale = None
        if grad_scale is not None and grad_scale != 1:
            scale = torch.full((1,), float(grad_scale), dtype=torch.float32, device=weight.device)
        handle = ManagedWeight(name, weight, param, state, group, len(self.managed), transposed, step_when_unused,
                               scale, honours_requires_grad, param_version=param._version)
        self.managed.append(handle)
        if not any(p is param for p in group["params"]):
            group["params"].append(param)
        return handle

    def _telemetry(self, handle: ManagedWeight) -> ops.StepTelemetry:
        if self._sumsq is None:  # zeroed in place at every step(): the per-weight views stay valid
            device = self.managed[0].weight.device
            self._sumsq = torch.zeros(len(self.managed), dtype=torch.float32, device=device)
            self._nonfinite = torch.zeros(len(self.managed), dtype=torch.int32, device=device)
            for h in self.managed:
                h.telemetry = ops.StepTelemetry(self._sumsq[h.index: h.index + 1],
                                                self._nonfinite[h.index: h.index + 1])
        return handle.telemetry

    # ---- the backward hook -----------------------------------------------------
    def backward(self, handle: ManagedWeight, grad_output: torch.Tensor, input: torch.Tensor) -> None:
        """Consume dY and X for ``handle``: step, accumulate, or (deferred) materialize.

        Call it after dX = dY W has been computed from the pre-update weight.
        """
        if handle.transposed:
            grad_output, input = input, grad_output
        last = self._begin_backward(handle)
        self._consume(handle, grad_output, input, last, None)  # raises before writing: nothing is counted
        self._finish_backward(handle, last)

    def backward_rows(self, handle: ManagedWeight, input: torch.Tensor, blocks: Sequence[tuple[int, int]],
                      grad_output_of: Callable[[int, int], torch.Tensor]) -> None:
        """``backward`` for a weight whose dY is produced one row block at a time (an LM head
        fused with its loss never holds dY for the whole vocabulary). ``blocks`` are
        consecutive (start, stop) ranges covering every row once; ``grad_output_of(start,
        stop)`` returns dY[:, start:stop], and rows [start, stop) are stepped (or
        accumulated) before the next block is asked for, so the producer may read the rows
        of later blocks, still at their pre-update values."""
        if handle.transposed:
            raise ValueError(f"{handle.name}: a transposed (Conv1D) weight cannot be stepped in row blocks")
        rows = handle.weight.shape[0]
        blocks = list(blocks)
        starts, stops = [a for a, _ in blocks], [b for _, b in blocks]
        if not blocks or starts[0] != 0 or stops[-1] != rows or starts[1:] != stops[:-1] or any(
                a >= b for a, b in blocks):
            raise ValueError(f"{handle.name}: row blocks {blocks[:4]}... must be consecutive non-empty ranges "
                             f"covering rows 0..{rows}")
        last = self._begin_backward(handle)
        stepped = False
        try:
            for start, stop in blocks:
                self._consume(handle, grad_output_of(start, stop), input, last, (start, stop))
                stepped = last and not self.deferred
        except BaseException:
            if stepped:  # earlier blocks were stepped in place: count the step, as for skipped tiles
                self._finish_backward(handle, last)
            raise
        self._finish_backward(handle, last)

    def _begin_backward(self, handle: ManagedWeight) -> bool:
        """True when this backward is the last micro-batch before ``step()`` (counted once consumed)."""
        if handle.stepped_iteration == self.iteration and not self.deferred:
            raise RuntimeError(
                f"{handle.name}: a second backward reached this fused weight before optimizer.step(); "
                f"its update already happened. {self.accumulation_advice}; a weight used twice per "
                "forward must not be fused"
            )
        return handle.micro_batches + 1 == self.grad_accumulation

    def _consume(self, handle: ManagedWeight, grad_output: torch.Tensor, input: torch.Tensor, last: bool,
                 rows: tuple[int, int] | None) -> None:
        """Accumulate (earlier micro-batches, deferred mode) or step rows ``rows`` (None: all)."""
        if self.deferred or not last:
            accum = handle.accum
            if accum is None:  # kept only once a call has added to it: a rejected call leaves no buffer
                dtype = torch.float32 if self.deferred else ACCUMULATION_DTYPES[self.accumulation_dtype]
                accum = torch.zeros(handle.weight.shape, dtype=dtype, device=handle.weight.device)
            target = accum if rows is None else accum[rows[0]:rows[1]]
            ops.accumulate_wgrad(grad_output, input, target, backend=self.backend, allow_tf32=self.allow_tf32)
            handle.accum = accum
        else:
            self._fused_step(handle, grad_output, input, rows)

    def _finish_backward(self, handle: ManagedWeight, last: bool) -> None:
        """Count the micro-batch; after the last one the step was taken (deferred: at ``step()``)."""
        handle.micro_batches += 1
        self.backward_since_step = True
        if not last:
            return
        if self.deferred:
            handle.stepped_iteration = self.iteration
        else:
            self._commit(handle)

    def _commit(self, handle: ManagedWeight) -> None:
        handle.state.commit_step(handle.pending)
        handle.accum = None
        handle.stepped_iteration = self.iteration

    def bias_backward(self, handle: ManagedWeight, grad_output: torch.Tensor) -> None:
        """A bias seen as an (out, 1) weight: its gradient is dY^T 1."""
        dy = grad_output.reshape(-1, grad_output.shape[-1])
        ones = torch.ones((), dtype=dy.dtype, device=dy.device).expand(dy.shape[0], 1)
        self.backward(handle, dy, ones)

    def _prepare(self, handle: ManagedWeight) -> torch.Tensor:
        if self._prepared_iteration != self.iteration:
            self._prepare_iteration()
        return handle.hyper

    def _prepare_iteration(self) -> None:
        """Every weight's per-step scalars, read from its group now, in one host-to-device
        copy (one copy per fused layer costs more host time than its kernel launch). A
        weight's step count advances only when its step runs (``_fused_step``)."""
        memo: dict = {}
        pending = [h.state.next_step(h.group, memo) for h in self.managed]  # one rule: one width
        if self._hyper is None:
            self._hyper = torch.zeros(len(self.managed), len(pending[0].values), dtype=torch.float32,
                                      device=self.managed[0].weight.device)
            for h in self.managed:
                h.hyper = self._hyper[h.index]
        copy_scalars_to_device(self._hyper, [p.values for p in pending])
        for h, p in zip(self.managed, pending):
            h.pending = p
        self._prepared_iteration = self.iteration

    def _fused_step(self, handle: ManagedWeight, grad_output: torch.Tensor, input: torch.Tensor,
                    rows: tuple[int, int] | None = None) -> None:
        """The fused step of the weight, or of its rows ``rows`` (the caller commits the step)."""
        self._sync_master(handle)
        weight, state, accum = handle.weight, handle.state, handle.accum
        if rows is not None:
            weight, state = handle.rows(*rows)
            accum = None if accum is None else accum[rows[0]:rows[1]]
        scale = self.grad_scale
        if handle.grad_scale is not None:
            scale = handle.grad_scale if scale is None else scale * handle.grad_scale
        ops.fused_wgrad_step(
            grad_output, input, weight, state, self._prepare(handle),
            accumulated=accum, grad_scale=scale, telemetry=self._telemetry(handle),
            backend=self.backend, allow_tf32=self.allow_tf32,
        )

    @staticmethod
    def _sync_master(handle: ManagedWeight) -> None:
        """The rule reads a weight with an fp32 master from the master. A write to the parameter
        outside the fused step (``model.load_state_dict``, an init, an EMA copy) bumps its version
        counter, which the kernel's writes do not: the master then takes the written weight,
        where it still rounds to it (a checkpoint's master loaded beside its weights). A write
        through ``param.data`` bumps no counter and is not seen: write under ``torch.no_grad()``."""
        master = handle.state.master
        if master is None or handle.param._version == handle.param_version:
            return
        handle.param_version = handle.param._version
        with torch.no_grad():  # per element: a write to some rows keeps the fp32 bits of the others
            master.copy_(torch.where(master.to(handle.weight.dtype) == handle.weight, master, handle.weight.float()))

    def _empty_operands(self, handle: ManagedWeight) -> tuple[torch.Tensor, torch.Tensor]:
        out_f, in_f = handle.weight.shape
        dtype = torch.float32 if handle.weight.dtype == torch.float32 else torch.bfloat16
        empty = torch.empty(0, dtype=dtype, device=handle.weight.device)
        return empty.view(0, 1).expand(0, out_f), empty.view(0, 1).expand(0, in_f)

    # ---- the optimizer step ------------------------------------------------------
    def step(self) -> None:
        """Finish the iteration: run deferred steps, the gradient-free steps of unused
        weights that ask for them, check accumulation and the non-finite guard."""
        # An expert no token reached in some micro-batches steps from what it accumulated;
        # any other weight must see every micro-batch
        pending = [h for h in self.managed
                   if 0 < h.micro_batches < self.grad_accumulation and not h.step_when_unused]
        if pending:
            raise RuntimeError(
                f"optimizer.step() after {pending[0].micro_batches} of {self.grad_accumulation} micro-batches "
                f"for {[h.name for h in pending[:3]]}: run every micro-batch's backward first "
                "(grad_accumulation counts them)"
            )
        for handle in self.managed:
            if self.deferred and handle.accum is not None:
                self._fused_step(handle, *self._empty_operands(handle))
                self._commit(handle)
            elif (handle.stepped_iteration != self.iteration and handle.step_when_unused
                  and (handle.param.requires_grad or not handle.honours_requires_grad)):
                self._fused_step(handle, *self._empty_operands(handle))
                self._commit(handle)
            handle.micro_batches = 0
        bad = {}
        if self._sumsq is not None:
            self.last_sumsq = self._sumsq.clone()
            self.last_nonfinite = self._nonfinite.clone()
            self._sumsq.zero_()
            self._nonfinite.zero_()
            if self.on_nonfinite == "raise":
                bad = self.nonfinite_report()
        self.iteration += 1  # before raising: the next iteration's backward runs normally
        self.backward_since_step = False
        if bad:
            raise FloatingPointError(
                f"non-finite gradients in {len(bad)} fused weight(s), tiles skipped (the rest were applied): "
                f"{dict(list(bad.items())[:5])}"
            )

    def zero_grad(self) -> None:
        """Discard the gradients of this iteration not yet stepped, as ``Optimizer.zero_grad``
        discards ``.grad``: deferred gradients and the earlier micro-batches of exact
        accumulation. A weight already stepped in its backward stays stepped."""
        for handle in self.managed:
            if handle.accum is None:
                continue
            handle.accum = None
            handle.micro_batches = 0
            if self.deferred:
                handle.stepped_iteration = -1

    # ---- telemetry -------------------------------------------------------------
    def grad_sumsq(self, current: bool = True) -> torch.Tensor:
        """Sum of g^2 over every fused weight: of the iteration in progress (``current``, as
        ``per_tensor_sumsq``) or of the last finished step. A device scalar, no sync."""
        if current:
            return self.per_tensor_sumsq().sum()
        src = self.last_sumsq
        if src is None:
            device = self.managed[0].weight.device if self.managed else "cpu"
            return torch.zeros((), device=device)
        return src.sum()

    def per_tensor_sumsq(self) -> torch.Tensor:
        """Sum of g^2 of the iteration in progress, one entry per ``managed`` weight
        (fp32 device vector, no sync): from the kernels' telemetry, or in deferred
        mode from the gradients materialized so far. Before any grad scale."""
        device = self.managed[0].weight.device if self.managed else "cpu"
        if self.deferred:
            zero = torch.zeros((), dtype=torch.float32, device=device)
            values = [h.accum.float().pow(2).sum() if h.accum is not None else zero for h in self.managed]
            return torch.stack(values) if values else zero.view(0)
        if self._sumsq is None:
            return torch.zeros(len(self.managed), dtype=torch.float32, device=device)
        return self._sumsq.clone()

    def nonfinite_tiles(self) -> torch.Tensor:
        """Tiles skipped for a non-finite gradient so far in the iteration in progress, per
        ``managed`` weight (int32 device vector, no sync; deferred mode counts at ``step()``)."""
        if self._nonfinite is None:
            device = self.managed[0].weight.device if self.managed else "cpu"
            return torch.zeros(len(self.managed), dtype=torch.int32, device=device)
        return self._nonfinite.clone()

    def per_tensor_norms(self, current: bool = False) -> dict[str, float]:
        """{name: ||g||_2} of the last finished step, or of the iteration in progress
        (``current``, as ``per_tensor_sumsq``). Host sync."""
        src = self.per_tensor_sumsq() if current else self.last_sumsq
        if src is None:
            return {}
        return {h.name: v for h, v in zip(self.managed, src.sqrt().tolist())}

    def nonfinite_report(self) -> dict[str, int]:
        """{name: tiles skipped} of the last finished step, non-zero entries only (host sync)."""
        if self.last_nonfinite is None:
            return {}
        return {h.name: n for h, n in zip(self.managed, self.last_nonfinite.tolist()) if n}

    # ---- accounting and persistence -----------------------------------------------
    def params(self) -> Iterable[torch.nn.Parameter]:
        seen: set[int] = set()
        for h in self.managed:
            if id(h.param) not in seen:
                seen.add(id(h.param))
                yield h.param

    def gradient_bytes_saved(self) -> int:
        """Bytes a standard backward would have allocated for these weights' gradients."""
        return sum(h.weight.numel() * h.param.element_size() for h in self.managed)

    def state_nbytes(self) -> int:
        return sum(h.state.nbytes for h in self.managed)

    def state_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "weights": {h.name: h.state.state_dict() for h in self.managed}}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        """Load ``state_dict()``'s output: every weight's entry is checked before any is written."""
        self.checked_load(sd)()

    def checked_load(self, sd: dict[str, Any]) -> Callable[[], None]:
        """Check ``sd`` (from ``state_dict()``) whole and return the function that loads it:
        nothing is written before it is called."""
        try:
            weights, iteration = dict(sd["weights"]), int(sd["iteration"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a FORGE engine state_dict: no well-formed weights and iteration ({e!r})") from None
        names = {h.name for h in self.managed}
        if set(weights) != names:
            missing, extra = sorted(names - set(weights)), sorted(set(weights) - names)
            raise ValueError(f"FORGE state_dict does not match: missing {missing[:5]}, unexpected {extra[:5]}")
        loads = []
        for h in self.managed:
            try:
                loads.append(h.state.checked_load(weights[h.name]))
            except ValueError as e:
                raise ValueError(f"{h.name}: {e}") from None

        def load() -> None:
            for load_weight in loads:
                load_weight()
            self.iteration = iteration
            self._prepared_iteration = -1  # the scalars prepared so far came from the replaced step counts

        return load
