"""The probe forward: how many times each parameter is read, counted from autograd.

A weight may be fused only if its module's forward is its single reader in a
step (paper Remark 2): a second reader (a tied embedding, a reused module, a
functional ``F.linear(x, m.weight)`` elsewhere) would either read it after the
in-place update or send a gradient that the fused step never sees. Neither
would raise: in-place kernel writes do not bump autograd's version counter.

The probe runs one forward with grad enabled and walks the resulting graph.
A *use* of a parameter is an edge into its ``AccumulateGrad`` node, looking
through views and casts (``t()``, ``view``, ``param[e]``, autocast's cached
``_to_copy``), so two matmuls on one cached bf16 copy are two uses. Each use
is attributed to the module call that created it by autograd's per-thread
node sequence number, bracketed by forward pre/post hooks on the candidate
modules: a module never entered through ``Module.forward`` (paper App. P's
bypassed modules) shows uses but no calls.

A read outside autograd (``weight.detach()``, ``weight.data``) makes no edge, but
if an autograd node saves it for its backward, that backward reads the weight
after its fused step. The probe's saved-tensor hook counts those: a saved tensor
that does not require grad and shares a candidate parameter's storage. Inside
non-reentrant activation checkpointing the checkpoint's own saved-tensor hook
replaces the probe's, so there a detached read counts whether or not it is saved
(a torch-function mode sees ``detach``/``.data`` on the parameter).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

# Autograd nodes that only re-view or re-type their single input: a read
# through them is a read of the parameter underneath.
_PASS_THROUGH = frozenset({
    "TBackward0", "TransposeBackward0", "TransposeBackward1", "PermuteBackward0", "ViewBackward0",
    "UnsafeViewBackward0", "ReshapeAliasBackward0", "ExpandBackward0", "SelectBackward0", "SliceBackward0",
    "AsStridedBackward0", "ToCopyBackward0", "AliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
    "SqueezeBackward1", "SqueezeBackward2", "ViewAsRealBackward0", "ViewAsComplexBackward0",
})


@dataclass
class ModuleUse:
    """What the probe saw for one candidate module.

    calls: forward calls with grad enabled.
    no_grad_calls: forward calls under ``torch.no_grad`` (reentrant checkpointing runs them so).
    uses: {parameter attribute name: autograd uses anywhere in the forward}.
    own_uses: {parameter attribute name: of those, uses created inside this module's forward calls}.
    detached_saves: {parameter attribute name: tensors saved for backward that alias it outside autograd,
        or detached reads where the probe cannot see what is saved (activation checkpointing)}.
    """

    calls: int = 0
    no_grad_calls: int = 0
    uses: dict[str, int] = field(default_factory=dict)
    own_uses: dict[str, int] = field(default_factory=dict)
    detached_saves: dict[str, int] = field(default_factory=dict)


def _storage(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # a tensor without a plain storage (subclass, sparse)
        return None


def _sequence_marker() -> int:
    """Autograd's current node sequence number (a throwaway node takes the next one)."""
    return torch.zeros((), requires_grad=True).mul(1).grad_fn._sequence_nr()


def _tensors(obj: Any) -> Iterator[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)
    elif hasattr(obj, "to_tuple"):  # HF ModelOutput
        yield from _tensors(obj.to_tuple())


def _count_uses(roots: list[torch.Tensor]) -> dict[int, list[int | None]]:
    """{id(leaf): [sequence number of each consumer node (None: a graph root)]}."""
    nodes, stack, seen = [], [t.grad_fn for t in roots if t.grad_fn is not None], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(child for child, _ in node.next_functions)

    leaf_of: dict[int, torch.Tensor | None] = {}

    def leaf(node: torch.autograd.graph.Node) -> torch.Tensor | None:
        """The leaf a node is a view/cast chain of, or None for a real computation."""
        key = id(node)
        if key not in leaf_of:
            leaf_of[key] = None
            if hasattr(node, "variable"):  # AccumulateGrad
                leaf_of[key] = node.variable
            elif node.name() in _PASS_THROUGH:
                children = [c for c, _ in node.next_functions if c is not None]
                if len(children) == 1:
                    leaf_of[key] = leaf(children[0])
        return leaf_of[key]

    uses: dict[int, list[int | None]] = defaultdict(list)
    for node in nodes:
        if leaf(node) is not None:
            continue
        for child, _ in node.next_functions:
            target = leaf(child) if child is not None else None
            if target is not None:
                uses[id(target)].append(node._sequence_nr())
    for t in roots:  # an output that is itself a view of a parameter
        if t.grad_fn is not None and leaf(t.grad_fn) is not None:
            uses[id(leaf(t.grad_fn))].append(None)
    return uses


@contextlib.contextmanager
def _preserved(model: nn.Module) -> Iterator[None]:
    """The probe must leave no trace: RNG streams (dropout) and buffers (BatchNorm statistics)."""
    devices = sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"})
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    with torch.random.fork_rng(devices=devices), torch.enable_grad():
        try:
            yield
        finally:
            with torch.no_grad():
                for b, saved in buffers:
                    b.copy_(saved)


def _return_as_is(t: torch.Tensor) -> torch.Tensor:
    return t


_DATA_GET = torch._C.TensorBase.data.__get__


class _DetachedReadsOutOfSight(TorchFunctionMode):
    """Counts ``detach()``/``.data`` of a candidate parameter made while a saved-tensor hook
    other than the probe's is on top (a non-reentrant checkpoint's): there the probe cannot
    tell whether a backward keeps the result, so the read counts as kept."""

    def __init__(self, params: dict[int, tuple[str, str]], hooks: tuple, count: Callable) -> None:
        super().__init__()
        self.params, self.hooks, self.count = params, hooks, count

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if (func is torch.Tensor.detach or func == _DATA_GET) and args and id(args[0]) in self.params:
            top = torch._C._autograd._top_saved_tensors_default_hooks(False)
            if top is not None and tuple(top) != self.hooks:
                self.count(self.params[id(args[0])])
        return func(*args, **(kwargs or {}))


def probe_uses(model: nn.Module, run_forward: Callable[[], Any], modules: dict[str, nn.Module]) -> dict[str, ModuleUse]:
    """Run ``run_forward()`` once and report, for each module in ``modules`` (by name),
    its forward calls and the autograd uses of each of its direct parameters."""
    intervals: dict[str, list[tuple[int, int]]] = defaultdict(list)
    open_calls: dict[str, list[int | None]] = defaultdict(list)
    result = {name: ModuleUse() for name in modules}

    def pre_hook(name: str) -> Callable[[nn.Module, tuple[Any, ...]], None]:
        def hook(_module: nn.Module, _args: tuple[Any, ...]) -> None:
            if torch.is_grad_enabled():
                open_calls[name].append(_sequence_marker())
                result[name].calls += 1
            else:
                open_calls[name].append(None)
                result[name].no_grad_calls += 1
        return hook

    def post_hook(name: str) -> Callable[[nn.Module, tuple[Any, ...], Any], None]:
        def hook(_module: nn.Module, _args: tuple[Any, ...], _output: Any) -> None:
            start = open_calls[name].pop()
            if start is not None:
                intervals[name].append((start, _sequence_marker()))
        return hook

    owner = {_storage(p): (name, pname) for name, module in modules.items()
             for pname, p in module.named_parameters(recurse=False)}
    owner.pop(None, None)

    def count(aliased: tuple[str, str]) -> None:
        saves = result[aliased[0]].detached_saves
        saves[aliased[1]] = saves.get(aliased[1], 0) + 1

    def pack(t: torch.Tensor) -> torch.Tensor:
        if not t.requires_grad:
            aliased = owner.get(_storage(t))
            if aliased is not None:
                count(aliased)
        return t

    params = {id(p): (name, pname) for name, module in modules.items()
              for pname, p in module.named_parameters(recurse=False)}
    hooks = (pack, _return_as_is)

    handles = []
    for name, module in modules.items():
        handles.append(module.register_forward_pre_hook(pre_hook(name)))
        handles.append(module.register_forward_hook(post_hook(name), always_call=True))
    try:
        with (_preserved(model), torch.autograd.graph.saved_tensors_hooks(*hooks),
              _DetachedReadsOutOfSight(params, hooks, count)):
            output = run_forward()
            uses = _count_uses([t for t in _tensors(output) if t.requires_grad])
            del output
    finally:
        for h in handles:
            h.remove()

    for name, module in modules.items():
        spans = intervals[name]
        for pname, param in module.named_parameters(recurse=False):
            seqs = uses.get(id(param), [])
            result[name].uses[pname] = len(seqs)
            result[name].own_uses[pname] = sum(
                1 for s in seqs if s is not None and any(a < s < b for a, b in spans)
            )
    return result

