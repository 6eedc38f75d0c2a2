"""The per-weight handle every placement hands to the fused step.

A ``ForgeParamState`` carries one managed weight's rule, state codec, weight
store, encoded optimizer state, optional fp32 master, step count and the
device buffer of per-step scalars. The object a user steps (``patch()``'s
optimizer, the megatron optimizer member) owns the hyperparameter groups and
calls ``prepare_step(group)`` when a backward starts; the backward then runs
``forge_mcore.ops.fused_wgrad_step`` with the returned scalars.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from .codecs import EncodedState, StateCodec, WeightStore, default_weight_store, get_codec, get_weight_store
from .codecs.base import CODES_VERSION
from .rules import MAX_STATE_SLOTS, Rule, StateSpec, get_rule

# The stochastic-rounding seed travels as an fp32 scalar: keep it exact.
_SEED_MODULUS = 1 << 24
# Distinct base seeds per state without touching torch's global RNG.
_seed_counter = itertools.count(1)


@dataclass
class ForgeParamState:
    rule: Rule
    codec: StateCodec
    store: WeightStore
    variant: int
    specs: tuple[StateSpec, ...]
    slots: list[EncodedState | None]
    master: torch.Tensor | None
    hyper_buffer: torch.Tensor
    base_seed: int
    weight_shape: tuple[int, int]
    step: int = 0
    scalars: dict[str, float] = field(default_factory=dict)
    # ``ops``' per-weight cache of what a launch derives from this weight's persistent
    # tensors (constexprs, launch plans, tile descriptors): rebuilt on demand, never saved.
    launch_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def create(
        cls,
        weight: torch.Tensor,
        rule: str | Rule = "adamw",
        group: Mapping[str, Any] | None = None,
        state_dtype: str | StateCodec = "fp32",
        weight_store: str | WeightStore | None = None,
        seed: int | None = None,
    ) -> "ForgeParamState":
        """Allocate the optimizer state of ``weight`` (out x in) for ``rule``.

        ``group`` holds the rule's hyperparameters (defaults fill the rest);
        ``weight_store`` defaults to the weight's own dtype (``fp32`` or ``bf16``).
        """
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise ValueError(f"weight must be a 2-D tensor (out_features x in_features), got {_describe(weight)}")
        if weight.numel() == 0:
            raise ValueError(f"weight of shape {tuple(weight.shape)} has no elements: there is nothing to step")
        rule = get_rule(rule)
        group = rule.make_group(**(group or {}))
        codec = get_codec(state_dtype)
        store = get_weight_store(weight_store if weight_store is not None else default_weight_store(weight))
        if weight.dtype != store.weight_dtype:
            raise TypeError(
                f"weight_store {store.name!r} needs a {store.weight_dtype} weight, got {weight.dtype}"
                + ("; fp16 is not supported, use bf16" if weight.dtype == torch.float16 else "")
            )
        specs = rule.states(group)
        slots: list[EncodedState | None] = [None] * MAX_STATE_SLOTS
        with torch.no_grad():
            for spec in specs:
                slots[spec.slot] = codec.zeros(tuple(weight.shape), weight.device, spec.nonnegative, spec.init)
            master = weight.detach().float().clone() if store.has_master else None
        if seed is None:
            seed = (next(_seed_counter) * 2654435761) % _SEED_MODULUS
        return cls(
            rule=rule, codec=codec, store=store, variant=rule.variant(group), specs=specs, slots=slots,
            master=master,
            hyper_buffer=torch.zeros(len(rule.hyper_names) + 1, dtype=torch.float32, device=weight.device),
            base_seed=seed, weight_shape=tuple(weight.shape),
        )

    @property
    def rows(self) -> int:
        """The weight's row count (out_features)."""
        return self.weight_shape[0]

    @property
    def slot_tensors(self) -> list[tuple[torch.Tensor, torch.Tensor | None] | None]:
        """Per slot, its (codes, block scales or None), or None where the rule keeps no state
        there: the form the kernels' launchers take."""
        return [(s.data, s.scale) if s is not None else None for s in self.slots]

    @property
    def seed_index(self) -> int:
        """Index of the stochastic-rounding seed in ``hyper_buffer`` (after the rule's scalars)."""
        return len(self.rule.hyper_names)

    def next_step(self, group: Mapping[str, Any], memo: dict | None = None) -> "PendingStep":
        """This state's next step from ``group``, computed but not taken: its per-step
        scalars (the rule's, then the stochastic-rounding seed) and the step count and
        scalar state it leaves. ``commit_step`` takes it. Raises ``ValueError`` on bad
        hyperparameters.

        memo: a dict the caller keeps for one pass over many states of one rule: states
        of one group at the same step with the same scalar state share the group's
        validation and the rule's scalars (hundreds of layers, one computation).
        """
        key = (id(group), self.variant, self.specs, self.step, tuple(sorted(self.scalars.items())))
        shared = memo.get(key) if memo is not None else None
        if shared is None:
            missing = sorted(set(self.rule.defaults) - set(group))
            if missing:
                raise ValueError(f"group lacks {missing}: build it with state.rule.make_group(lr=...), which fills "
                                 f"the {self.rule.name!r} defaults")
            self.rule.validate(group)
            if self.rule.variant(group) != self.variant or self.rule.states(group) != self.specs:
                raise ValueError(
                    f"the {self.rule.name!r} options that choose the state tensors changed after the state was "
                    "allocated (e.g. momentum turned on or off); create a new state for the new configuration"
                )
            scalars = dict(self.scalars)
            values = self.rule.hyper(group, self.step + 1, scalars)
            if len(values) != len(self.rule.hyper_names) or not all(math.isfinite(v) for v in values):
                raise ValueError(f"rule {self.rule.name!r} produced bad per-step scalars {values} from {dict(group)}")
            shared = (values, scalars)
            if memo is not None:
                memo[key] = shared
        values, scalars = shared
        step = self.step + 1
        seed = float((self.base_seed + step * 7919) % _SEED_MODULUS)
        return PendingStep([*values, seed], step, dict(scalars))

    def commit_step(self, pending: "PendingStep") -> None:
        """Advance the step count and scalar state to ``pending`` (once its kernel was launched)."""
        self.step, self.scalars = pending.step, pending.scalars

    def prepare_step(self, group: Mapping[str, Any]) -> torch.Tensor:
        """Advance the step count and load this step's scalars into ``hyper_buffer``.

        Reads the hyperparameters from ``group`` now, so a scheduler's edit of
        ``group["lr"]`` takes effect on the next backward without recompiling.
        (The engine prepares all its weights at once with ``next_step`` instead.)
        """
        pending = self.next_step(group)
        copy_scalars_to_device(self.hyper_buffer, [pending.values])
        self.commit_step(pending)
        return self.hyper_buffer

    def row_view(self, start: int, stop: int) -> "ForgeParamState":
        """The state of rows [start, stop) of the weight: views of the same tensors, so a
        fused step on the weight's rows updates this state in place. It has its own launch
        cache and never advances the step count: the whole weight's state commits the step
        once every row block has run (``ForgeEngine.backward_rows``)."""
        if self.store.stochastic:
            # the random bits are keyed by the element's offset in the tensor the kernel sees:
            # every row block would round with the same bits
            raise ValueError(
                f"weight_store {self.store.name!r} cannot be stepped in row blocks (each block would reuse the "
                "same random bits); use 'bf16' or 'fp32_master'"
            )
        if not (0 <= start < stop <= self.rows):
            raise ValueError(f"row_view({start}, {stop}) is not a non-empty row range of a {self.rows}-row weight")
        slots = [None if s is None else dataclasses.replace(
            s, data=s.data[start:stop], scale=None if s.scale is None else s.scale[start:stop]) for s in self.slots]
        master = None if self.master is None else self.master[start:stop]
        return dataclasses.replace(self, slots=slots, master=master, launch_cache={},
                                   weight_shape=(stop - start, self.weight_shape[1]))

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """The decoded fp32 value of each state, by its torch.optim name."""
        return {spec.name: self.codec.decode(self.slots[spec.slot]) for spec in self.specs}

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue bit-identically: encoded states as stored
        (codes and scales, not re-encoded), master, step, scalar state, seed."""
        return {
            "rule": self.rule.name, "state_dtype": self.codec.name, "weight_store": self.store.name,
            "codes_version": CODES_VERSION, "step": self.step, "scalars": dict(self.scalars),
            "base_seed": self.base_seed,
            "states": {
                spec.name: {"data": self.slots[spec.slot].data, "scale": self.slots[spec.slot].scale}
                for spec in self.specs
            },
            "master": self.master,
        }

    def load_state_dict(self, sd: Mapping[str, Any]) -> None:
        """Copy ``sd`` (from ``state_dict()``) into this state; everything is checked first."""
        self.checked_load(sd)()

    def checked_load(self, sd: Mapping[str, Any]) -> Callable[[], None]:
        """Check ``sd`` (from ``state_dict()``) against this state and return the function that
        copies it in: nothing is written before it is called, so a caller loading many states
        checks them all first."""
        if not isinstance(sd, Mapping):
            raise ValueError(f"a ForgeParamState state_dict is a dict, got {type(sd).__name__}")
        for key, mine in (("rule", self.rule.name), ("state_dtype", self.codec.name),
                          ("weight_store", self.store.name)):
            if sd.get(key) != mine:
                raise ValueError(f"state_dict has {key}={sd.get(key)!r}, this state uses {mine!r}")
        try:
            step, scalars, base_seed = int(sd["step"]), dict(sd["scalars"]), int(sd["base_seed"])
            states = dict(sd["states"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"state_dict lacks a well-formed step, scalars, base_seed or states ({e!r})") from None
        names = {spec.name for spec in self.specs}
        if set(states) != names:
            raise ValueError(f"state_dict holds states {sorted(states)}, this rule needs {sorted(names)}")
        version = sd.get("codes_version", 1)  # (state_dicts before version 2 have no key)
        if version not in (1, CODES_VERSION):
            raise ValueError(f"state_dict has codes_version {version!r}; this forge_mcore reads 1 and {CODES_VERSION}")
        pairs = []
        for spec in self.specs:
            slot, saved = self.slots[spec.slot], states[spec.name]
            data = saved["data"]
            if version == 1 and self.codec.block is not None:
                # block codes in the older layout (M x N, column order): translated exactly, once checked
                if not (_is_tensor_of(data, slot.shape, slot.data.dtype)
                        and _is_tensor_of(saved["scale"], slot.scale.shape, slot.scale.dtype)):
                    raise ValueError(f"state_dict entry {spec.name} does not match: expected {slot.data.dtype} codes "
                                     f"{slot.shape} and {slot.scale.dtype} scales {tuple(slot.scale.shape)} "
                                     "(codes_version 1)")
                data = self.codec.codes_from_version_1(data, saved["scale"], slot.nonnegative)
            pairs.append((slot.data, data, f"{spec.name}.data"))
            if slot.scale is not None:
                pairs.append((slot.scale, saved["scale"], f"{spec.name}.scale"))
        if self.master is not None:
            pairs.append((self.master, sd.get("master"), "master"))
        for dst, src, name in pairs:
            if not _is_tensor_of(src, tuple(dst.shape), dst.dtype):
                raise ValueError(f"state_dict entry {name} does not match: expected {dst.dtype} {tuple(dst.shape)}")

        def load() -> None:
            with torch.no_grad():
                for dst, src, _ in pairs:
                    dst.copy_(src)
            self.step, self.scalars, self.base_seed = step, scalars, base_seed

        return load

    @property
    def nbytes(self) -> int:
        """Bytes of optimizer state (encoded states plus the fp32 master, if any)."""
        states = sum(s.nbytes for s in self.slots if s is not None)
        return states + (self.master.nbytes if self.master is not None else 0)


@dataclass
class PendingStep:
    """A step computed by ``ForgeParamState.next_step`` and not yet taken."""

    values: list[float]
    step: int
    scalars: dict[str, float]


def _is_tensor_of(x: Any, shape: tuple[int, ...], dtype: torch.dtype) -> bool:
    """Whether ``x`` is a tensor of this shape and dtype (what a state_dict entry must be)."""
    return isinstance(x, torch.Tensor) and tuple(x.shape) == tuple(shape) and x.dtype == dtype


def copy_scalars_to_device(dst: torch.Tensor, rows: list[list[float]]) -> None:
    """Write ``rows`` (host floats) into the fp32 device buffer ``dst`` without blocking.

    A blocking host-to-device copy would synchronize the stream: the host would wait
    for the GPU to drain its queue before launching the next kernel. Stage in pinned
    memory and copy asynchronously; the caching host allocator keeps the staging
    block alive until the copy ran.
    """
    cuda = dst.is_cuda
    if cuda and torch.cuda.is_current_stream_capturing():
        # A captured copy would re-read this step's staging memory at every replay.
        raise RuntimeError(
            "FORGE per-step scalars were prepared inside CUDA-graph capture: call prepare_step() before "
            "graph.replay() instead (the graph reads hyper_buffer, which prepare_step refreshes in place)"
        )
    staged = torch.tensor(rows, dtype=torch.float32, pin_memory=cuda)
    dst.copy_(staged.view(dst.shape), non_blocking=cuda)


def _describe(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    return type(x).__name__
