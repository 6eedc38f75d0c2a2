"""Run megatron-core's CUDA-only code paths on CPU tensors: CPU tests and ``--smoke`` runs.

megatron-core 0.16.1 hard-codes CUDA in places that have nothing to do with
the math: ``torch.cuda.current_device()`` for buffers and weights,
``device="cuda"`` for masks and norms, the CUDA RNG tracker, a
``torch.cuda.FloatTensor`` type assert in gradient clipping, and the checkpoint
writer's psutil memory log. ``megatron_on_cpu()`` redirects exactly those to the
CPU for the duration of a block, so megatron's GPT, DDP buffers, optimizers,
sequence parallelism and checkpointing run under gloo. Dropout must be off:
the RNG tracker's ``fork`` becomes a no-op and initialization draws from
torch's CPU generator. Never use it on a machine that trains on a GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode


def _cpu_device(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("cuda"):
        return "cpu"
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    return value


class _CudaAsCpu(TorchFunctionMode):
    """``device="cuda"`` becomes the CPU; ``Tensor.type()`` names CPU tensors as CUDA ones."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _cpu_device(kwargs["device"])
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to:
            args = tuple(_cpu_device(a) for a in args)
        result = func(*args, **kwargs)
        if func is torch.Tensor.type and len(args) == 1 and isinstance(result, str):
            return result if result.startswith("torch.cuda.") else result.replace("torch.", "torch.cuda.", 1)
        return result


@contextlib.contextmanager
def megatron_on_cpu() -> Iterator[None]:
    """Patch megatron-core's CUDA-only calls to use the CPU inside the block (see the module docstring)."""
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.tensor_parallel import random as mrandom

    @contextlib.contextmanager
    def no_fork(self, name: str | None = None) -> Iterator[None]:
        yield

    def add_without_cuda(self, name: str, seed: int) -> None:  # the tracker's bookkeeping, no CUDA generator
        self._is_initialized = True
        self.seeds_.add(seed)
        self.states_[name] = None

    tracker = mrandom.CudaRNGStatesTracker
    saved = (torch.cuda.current_device, torch.cuda.synchronize, tracker.fork, tracker.add,
             filesystem_async._process_memory)
    torch.cuda.current_device = lambda: "cpu"
    torch.cuda.synchronize = lambda device=None: None
    tracker.fork, tracker.add = no_fork, add_without_cuda
    if not filesystem_async.HAVE_PSUTIL:
        filesystem_async._process_memory = lambda: 0
    try:
        with _CudaAsCpu():
            yield
    finally:
        (torch.cuda.current_device, torch.cuda.synchronize, tracker.fork, tracker.add,
         filesystem_async._process_memory) = saved
