"""Allocation accounting on CPU: which storages aten ops create, and how long they live.

CPU has no ``torch.cuda.max_memory_allocated``; ``LiveBytes`` stands in for it
in tests. While active it records every storage an aten op returns (views and
in-place results, which share an input's storage, are not new), keeps a weak
reference to it, and sweeps the dead ones before each op: ``live`` is then
the bytes created under the tracker and still alive, ``peak`` its maximum.

The torch backend of the fused step materializes the fp32 gradient, which the
GPU kernel never does; tests run it under ``paused()`` so that only the
allocations the GPU path also makes are counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


@dataclass
class Allocation:
    """One storage created under the tracker: its size and address, and the op and tensor that created it."""

    nbytes: int
    ptr: int
    op: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    ref: StorageWeakRef

    @property
    def alive(self) -> bool:
        return not self.ref.expired()


class LiveBytes(TorchDispatchMode):
    """``with LiveBytes() as mem: ...`` -> ``mem.live``, ``mem.peak``, ``mem.created``, ``mem.survivors()``."""

    def __init__(self) -> None:
        super().__init__()
        self._live: dict[int, Allocation] = {}  # storage data_ptr -> allocation
        self.created: list[Allocation] = []
        self.live = 0
        self.peak = 0
        self._paused = 0

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Allocations inside are not recorded (the torch reference of the fused step)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def _sweep(self) -> None:
        for key in [k for k, a in self._live.items() if not a.alive]:
            self.live -= self._live.pop(key).nbytes

    def survivors(self) -> list[Allocation]:
        """Storages created under the tracker that are still alive."""
        self._sweep()
        return list(self._live.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self._paused:
            return out
        self._sweep()
        inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            key = storage.data_ptr()
            if storage.nbytes() == 0 or key in inputs or key in self._live:
                continue  # a view, an in-place result or an output seen twice
            alloc = Allocation(storage.nbytes(), key, str(func), tuple(t.shape), t.dtype, StorageWeakRef(storage))
            self._live[key] = alloc
            self.created.append(alloc)
            self.live += alloc.nbytes
        self.peak = max(self.peak, self.live)
        return out
