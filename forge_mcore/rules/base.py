"""The Rule contract: what an optimizer computes, on a tile and in plain torch.

A rule is a stateless family object (``AdamW``, ``SGD``, ...). Everything that
can change between parameter groups or steps lives in a torch-style ``group``
dict (``lr``, ``betas``, ``weight_decay`` ...), exactly as ``torch.optim``
keeps it, so ``param_groups`` and lr schedulers work unchanged.

Each rule provides, side by side:

* ``triton_update`` -- a ``@triton.jit`` epilogue
  ``(g, w, s0, s1, s2, h, VARIANT) -> (w, s0, s1, s2)`` on fp32 tiles.
  ``h`` is the tuple of its per-step scalars in the order of ``hyper_names``
  (``load_hyper``; the persistent Gluon kernel loads them once per launch); ``VARIANT`` is a
  constexpr bit set of structural options (momentum on/off, centered, nesterov,
  amsgrad ...).
* ``reference_update`` -- the same step in plain torch on fp32 tensors: the
  oracle for every test and the CPU backend.

State tensors sit in three fixed slots (``s0, s1, s2``); ``states(group)``
says which slots a configuration uses. Hyperparameters that change per step
(lr, bias corrections, step count) are computed here on the host in double
precision and reach the kernel as one small device tensor, so an lr schedule
never recompiles anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
import triton
import triton.language as tl

from ..registry import Registry

MAX_STATE_SLOTS = 3
MAX_HYPER = 11  # per-step scalars a rule may declare (``load_hyper`` reads this many)


@dataclass(frozen=True)
class StateSpec:
    """One optimizer state tensor of a rule.

    name: the torch.optim name (``exp_avg``, ``exp_avg_sq`` ...), used in state dicts.
    slot: which of the kernel's three state slots carries it.
    nonnegative: the tensor is >= 0 by construction (second moments); quantized
        codecs use it to spend their bits on magnitude and to floor the value
        away from zero.
    init: initial value (Adagrad's ``initial_accumulator_value``; else 0).
    """

    name: str
    slot: int
    nonnegative: bool = False
    init: float = 0.0


def _check_nonneg(name: str, value: float) -> None:
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a Python number (the kernel reads it from a per-step buffer, so a "
                        f"schedule never recompiles), got a tensor: pass {name}=float(...)")
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def _check_beta(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and 0.0 <= value < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")


class Rule:
    """Base class of every optimizer rule (see the module docstring)."""

    name: ClassVar[str]
    # Paper App. A: 1 = state and weight update tile-local (fully in the epilogue).
    regime: ClassVar[int] = 1
    # torch.optim-style defaults; a group must end up with exactly these keys.
    defaults: ClassVar[dict[str, Any]]
    hyper_names: ClassVar[tuple[str, ...]]
    # The @triton.jit epilogue; set by each subclass.
    triton_update: ClassVar[Any]
    # A zero weight, zero states and a zero gradient give zero states at every step: the Gluon
    # kernel then skips zeroing a tile's elements past the weight's edge (all of them read as
    # zeros there) before an int8 block's absmax. tests/unit/test_rules.py checks it on the reference update.
    zero_stays_zero: ClassVar[bool] = False
    # The torch.optim class this rule reproduces given the same gradient, if any.
    torch_equivalent: ClassVar[type[torch.optim.Optimizer] | None] = None

    # ---- configuration -------------------------------------------------
    def make_group(self, **hparams: Any) -> dict[str, Any]:
        """Defaults overlaid with ``hparams``; unknown names raise ``TypeError``."""
        unknown = sorted(set(hparams) - set(self.defaults))
        if unknown:
            raise TypeError(
                f"rule {self.name!r} got unknown hyperparameter(s) {unknown}; "
                f"it accepts {sorted(self.defaults)}"
            )
        group = dict(self.defaults)
        group.update(hparams)
        self.validate(group)
        return group

    def validate(self, group: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the bad hyperparameter."""
        _check_nonneg("lr", group["lr"])
        if "weight_decay" in group:
            _check_nonneg("weight_decay", group["weight_decay"])
        if "eps" in group:
            _check_nonneg("eps", group["eps"])
        if "betas" in group:
            betas = group["betas"]
            if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
                raise ValueError(f"betas must be a pair of floats, got {betas!r}")
            _check_beta("betas[0]", betas[0])
            _check_beta("betas[1]", betas[1])

    def states(self, group: Mapping[str, Any]) -> tuple[StateSpec, ...]:
        raise NotImplementedError

    def variant(self, group: Mapping[str, Any]) -> int:
        """Constexpr bit set of the structural options in ``group``."""
        return 0

    def affine_in_grad(self, group: Mapping[str, Any]) -> bool:
        """True when the state update is affine in G (reduce-into-state is exact
        under data parallelism, paper Prop. 2(iii))."""
        return False

    # ---- per step --------------------------------------------------------
    def hyper(self, group: Mapping[str, Any], step: int, scalars: dict[str, float]) -> list[float]:
        """Per-step scalars in ``hyper_names`` order, computed in double.

        ``step`` counts from 1 (this step included). ``scalars`` is the rule's
        per-tensor scalar state (e.g. NAdam's ``mu_product``); update it in place.
        """
        raise NotImplementedError

    def reference_update(
        self,
        g: torch.Tensor,
        w: torch.Tensor,
        s: list[torch.Tensor | None],
        h: list[float],
        variant: int,
    ) -> None:
        """The same step as ``triton_update`` in plain torch, in place on fp32 ``w`` and ``s``."""
        raise NotImplementedError


@triton.jit
def _hyper(hyper_ptr, INDEX: tl.constexpr, COUNT: tl.constexpr):
    if INDEX < COUNT:
        value = tl.load(hyper_ptr + INDEX)
    else:
        value = tl.load(hyper_ptr)  # past the rule's scalars: never read, so never loaded
    return value


@triton.jit
def load_hyper(hyper_ptr, COUNT: tl.constexpr):
    """A rule's ``COUNT`` per-step scalars from ``hyper_ptr`` as the tuple ``h`` its
    ``triton_update`` indexes (``MAX_HYPER`` entries; the unused ones are dead code)."""
    return (_hyper(hyper_ptr, 0, COUNT), _hyper(hyper_ptr, 1, COUNT), _hyper(hyper_ptr, 2, COUNT),
            _hyper(hyper_ptr, 3, COUNT), _hyper(hyper_ptr, 4, COUNT), _hyper(hyper_ptr, 5, COUNT),
            _hyper(hyper_ptr, 6, COUNT), _hyper(hyper_ptr, 7, COUNT), _hyper(hyper_ptr, 8, COUNT),
            _hyper(hyper_ptr, 9, COUNT), _hyper(hyper_ptr, 10, COUNT))


RULES: Registry[Rule] = Registry(Rule, "rule")


def register(rule_cls: type[Rule]) -> type[Rule]:
    """Class decorator: add one instance of ``rule_cls`` to the registry, once it declares what the kernels read."""
    rule = rule_cls()
    for name, value in (("hyper_names", rule.hyper_names), ("defaults", rule.defaults)):
        if not value:
            raise ValueError(f"rule {rule.name!r} declares no {name}")
    if len(rule.hyper_names) > MAX_HYPER:
        raise ValueError(f"rule {rule.name!r} declares {len(rule.hyper_names)} per-step scalars; the kernels read "
                         f"at most MAX_HYPER = {MAX_HYPER} (raise it and extend load_hyper)")
    RULES.add(rule)
    return rule_cls


def get_rule(rule: str | Rule) -> Rule:
    """The registered rule called ``rule`` (case-insensitive), or ``rule`` itself."""
    return RULES.get(rule)


def available_rules() -> list[str]:
    return RULES.names()
