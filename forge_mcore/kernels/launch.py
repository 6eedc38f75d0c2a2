"""Launching a Triton kernel without ``JITFunction.run``'s per-call argument binding.

``JITFunction.run`` re-derives the specialization of every parameter at each
call (60 for the fused kernel, 31 of them constexprs), builds its cache key and
looks the compiled kernel up. The fused step launches once per fused layer per
backward, 253 times per step for Qwen3-8B, and at batch 1 the host is what
paces the GPU: that binding costs milliseconds per step.

``DirectLauncher`` keeps each compiled kernel under Triton's own specialization
of the runtime arguments (the same ``native_specialize_impl`` calls the binder
makes), the constexpr values and the launch options, and calls the compiled
kernel's launcher directly, as torch inductor's generated code does. A new
specialization goes through ``JITFunction.run`` once, which compiles or loads
it. So a compiled kernel is reused exactly where Triton would reuse it.

Arguments a plan marks ``stable`` (a weight's own tiles and scalars: the same
objects at every launch of that weight) keep their specialization, and their
TMA descriptors keep the encoding Triton's launcher would otherwise redo with
``cuTensorMapEncodeTiled`` at every launch (``RawLaunch``); only dY and X, new
at every backward, are specialized and encoded per call.

``BoundLaunch`` goes one step further for a launch repeated at every step (``ops``'
replay, which checks that only addresses changed): every argument stays expanded
and only the few varying ones (dY, X, the grad scale) are swapped in per call.

Launch hooks (``triton.knobs.runtime.launch_enter_hook``, e.g. Proton) always
take ``JITFunction.run``; ``FORGE_DIRECT_LAUNCH=0`` forces it everywhere. Not for
the interpreter (its kernels are not ``JITFunction``s). Written against Triton
3.6's ``CompiledKernel.run`` signature.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True, eq=False)
class LaunchPlan:
    """The compile-time half of a launch, frozen once so no call rebuilds its key.

    constexprs: every constexpr by name; options: launch options (``num_warps``,
    ``num_stages``, ``maxnreg`` ...); key: the launcher's id of both (None: not made by a
    launcher); constexpr_values: the constexprs in parameter order (what the compiled
    kernel's launcher takes); stable: positions of runtime arguments that are the same
    objects at every launch of this plan (checked by identity; only objects that live as
    long as the plan belong there, since ``memo`` keeps them); memo: what the launcher
    derived from them.
    """

    constexprs: dict
    options: dict
    key: tuple | None
    constexpr_values: tuple
    stable: frozenset = frozenset()
    memo: dict = field(default_factory=dict)


class DirectLauncher:
    """``launcher(grid, args, launcher.plan(constexprs, options))`` ==
    ``kernel[grid](*args, **constexprs, **options)``.

    kernel: a ``@triton.jit`` function whose constexpr parameters all follow its runtime ones.
    args: the runtime arguments, in order. Keep a plan per constexpr/option set and reuse it.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        names = list(kernel.arg_names)
        constexpr_idx = list(kernel.constexprs)
        self.runtime_count = len(names) - len(constexpr_idx)
        if constexpr_idx != list(range(self.runtime_count, len(names))):
            raise ValueError(f"{kernel!r}: DirectLauncher needs every constexpr after the runtime arguments")
        self.constexpr_names = names[self.runtime_count:]
        self._compiled: dict[Hashable, Any] = {}
        self._plan_ids: dict[tuple, int] = {}
        self.direct_launches = 0  # tests read it: the direct path really ran

    def plan(self, constexprs: dict, options: dict, stable: frozenset = frozenset()) -> LaunchPlan:
        missing = [name for name in self.constexpr_names if name not in constexprs]
        if missing or len(constexprs) != len(self.constexpr_names):
            raise ValueError(f"constexprs must name exactly {self.constexpr_names}; missing {missing}")
        values = tuple(constexprs[name] for name in self.constexpr_names)
        # Interned to a small int: hashing the constexprs (JIT functions among them) per call costs microseconds.
        key = self._plan_ids.setdefault((values, tuple(sorted(options.items()))), len(self._plan_ids))
        return LaunchPlan(dict(constexprs), dict(options), (key,), values, frozenset(stable))

    def __call__(self, grid: tuple[int, ...], args: tuple, plan: LaunchPlan) -> "RawLaunch | None":
        """Launch; return the ``RawLaunch`` that ran it, or None where ``JITFunction.run`` did."""
        if len(args) != self.runtime_count:
            raise ValueError(f"expected {self.runtime_count} runtime arguments, got {len(args)}")
        if plan.key is None:
            raise ValueError("this LaunchPlan was not made by DirectLauncher.plan()")
        if not self._direct_allowed():
            self.kernel[grid](*args, **plan.constexprs, **plan.options)
            return None
        from triton import knobs
        from triton._C.libtriton import native_specialize_impl
        from triton.runtime.driver import driver

        device = driver.active.get_current_device()
        backend = self.kernel.device_caches[device][3]
        memo = plan.memo
        specs = []
        for i, arg in enumerate(args):
            hit = memo.get(i)
            if hit is not None and hit[0] is arg:
                specs.append(hit[1])
                continue
            spec = native_specialize_impl(backend, arg, False, True, True)  # what JITFunction.run's binder calls
            if i in plan.stable:
                memo[i] = (arg, spec)
            specs.append(spec)
        key = (device, plan.key, knobs.runtime.debug, knobs.compilation.instrumentation_mode, tuple(specs))
        raw = self._compiled.get(key)
        if raw is None:
            compiled = self.kernel[grid](*args, **plan.constexprs, **plan.options)
            if hasattr(compiled, "result"):  # asynchronous compilation mode
                compiled = compiled.result()
            self._compiled[key] = RawLaunch(compiled)
            return None
        grid = _grid3(grid)
        raw(grid, driver.active.get_current_stream(device), args, plan)
        self.direct_launches += 1
        return raw

    @staticmethod
    def _direct_allowed() -> bool:
        if os.environ.get("FORGE_DIRECT_LAUNCH", "1") == "0":
            return False
        return no_launch_hooks() and torch.cuda.is_available()


class RawLaunch:
    """A compiled kernel, launched through its C launcher with the arguments already expanded.

    Triton 3.6's ``CudaLauncher`` wraps the C launcher in a closure that expands every
    ``TensorDescriptor`` argument (``make_tensordesc_arg``: a ``cuTensorMapEncodeTiled`` and
    its shape and strides) at every launch. Here the expansion of a plan's stable
    arguments is kept in its memo (the CUtensorMap encodes the base address, which a stable
    argument never changes). Where the launcher does not have that shape (another Triton,
    scratch memory to allocate) every launch goes through ``CompiledKernel.run`` as before.
    """

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.c_launch = None
        runner = getattr(compiled, "run", None)
        wrapper = getattr(runner, "launch", None)
        if wrapper is None or getattr(runner, "global_scratch_size", 1) or getattr(runner, "profile_scratch_size", 1):
            return
        closure = getattr(wrapper, "__closure__", None)
        if closure is None:
            # no descriptor argument (the pointer path): Triton's launch is the C launcher itself
            if type(wrapper).__name__ != "builtin_function_or_method":
                return
            self.c_launch, self.desc_meta = wrapper, {}
        else:
            cells = dict(zip(wrapper.__code__.co_freevars, (c.cell_contents for c in closure)))
            if not {"launcher", "tensordesc_indices", "tensordesc_meta"} <= cells.keys():
                return
            self.c_launch = cells["launcher"]
            meta = cells["tensordesc_meta"] or [None] * len(cells["tensordesc_indices"])
            self.desc_meta = dict(zip(sorted(cells["tensordesc_indices"]), meta))  # argument position -> meta
        from triton.backends.nvidia.driver import make_tensordesc_arg

        self.make_tensordesc_arg = make_tensordesc_arg
        self.head = (runner.launch_cooperative_grid, runner.launch_pdl, None, None,
                     compiled.packed_metadata, None, None, None)  # no scratch, no launch metadata, no hooks

    def __call__(self, grid: tuple, stream: int, args: tuple, plan: LaunchPlan) -> None:
        compiled = self.compiled
        if self.c_launch is None:
            compiled.run(grid[0], grid[1], grid[2], stream, compiled.function, compiled.packed_metadata,
                         None, None, None, *args, *plan.constexpr_values)
            return
        final: list = []
        for i, arg in enumerate(args):
            final.extend(self._expand(i, arg, plan))
        # constexprs follow the runtime arguments; none of them is a descriptor
        self.c_launch(grid[0], grid[1], grid[2], stream, compiled.function, *self.head, *final,
                      *plan.constexpr_values)

    def _expand(self, i: int, arg: Any, plan: LaunchPlan) -> list:
        """Argument ``i`` as the C launcher takes it (a descriptor: its encoding, shape, strides)."""
        meta = self.desc_meta.get(i, False)
        if meta is False:
            return [arg]
        memo = plan.memo
        hit = memo.get((self, i))
        # the encoding holds the base address: reused only while the descriptor's tensor has not moved
        if hit is not None and hit[0] is arg and hit[1] == arg.base.data_ptr():
            return hit[2]
        expanded = self.make_tensordesc_arg(arg, meta)
        if i in plan.stable:
            memo[(self, i)] = (arg, arg.base.data_ptr(), expanded)
        return expanded

    def bind(self, grid: tuple, args: tuple, plan: LaunchPlan, varying: tuple[int, ...]) -> "BoundLaunch | None":
        """This launch with every argument expanded once but those at ``varying`` positions
        (None where the C launcher is not reachable)."""
        return BoundLaunch(self, grid, args, plan, varying) if self.c_launch is not None else None


class BoundLaunch:
    """A ``RawLaunch`` frozen but for the arguments at a few positions, which each call passes.

    ``bound(stream, *values)`` launches with ``values`` at the ``varying`` positions. A
    value must have the shape, strides and dtype of the argument bound there (for a
    descriptor position: of the descriptor's tensor, and the same 16-byte alignment; for a
    pointer: the same alignment, which Triton specializes on): the caller checks that,
    this class only swaps base addresses. A descriptor position is re-encoded from the
    bound descriptor with its base replaced, through Triton's own ``make_tensordesc_arg``.
    This is the launch path of a step repeated every iteration (``ops``' replay): nothing is
    validated, specialized or looked up per call.
    """

    def __init__(self, raw: RawLaunch, grid: tuple, args: tuple, plan: LaunchPlan, varying: tuple[int, ...]) -> None:
        import dataclasses

        self.c_launch, self.head, self.make_tensordesc_arg = raw.c_launch, raw.head, raw.make_tensordesc_arg
        self.grid = _grid3(grid)
        self.function, self.constexpr_values = raw.compiled.function, plan.constexpr_values
        self.flat: list = []
        self.slots: list[tuple[int, Any, Any]] = []  # (flat position, descriptor or None, its meta)
        for i, arg in enumerate(args):
            expanded = list(raw._expand(i, arg, plan))
            if i in varying:
                meta = raw.desc_meta.get(i, False)
                desc = None
                if meta is not False:  # our copy of the descriptor; its base is set per call
                    desc = dataclasses.replace(arg)
                    desc.base = None
                self.slots.append((len(self.flat), desc, meta))
                expanded[0] = None  # a varying tensor (dY, X: megabytes each) must not outlive its launch
            self.flat.extend(expanded)

    def __call__(self, stream: int, *values: Any) -> None:
        flat = self.flat.copy()
        for (pos, desc, meta), value in zip(self.slots, values):
            if desc is None or meta is None:  # a pointer, or an unencoded descriptor (its base comes first)
                flat[pos] = value
            else:
                desc.base = value
                try:
                    flat[pos] = self.make_tensordesc_arg(desc, meta)[0]
                finally:
                    desc.base = None
        grid = self.grid
        self.c_launch(grid[0], grid[1], grid[2], stream, self.function, *self.head, *flat, *self.constexpr_values)


def _grid3(grid: tuple) -> tuple:
    """A 1-, 2- or 3-D grid as the C launcher's (x, y, z)."""
    return tuple(grid) + (1,) * (3 - len(grid))


def no_launch_hooks() -> bool:
    """True when no Triton launch hook is installed (Triton 3.6 keeps them in ``HookChain``s,
    empty by default; older versions use ``None``). Called before every replayed launch."""
    runtime = _runtime_knobs()
    return _no_hook(runtime.launch_enter_hook) and _no_hook(runtime.launch_exit_hook)


def _no_hook(hook: Any) -> bool:
    return hook is None or (hasattr(hook, "calls") and not hook.calls)


@functools.cache
def _runtime_knobs() -> Any:
    from triton import knobs

    return knobs.runtime
