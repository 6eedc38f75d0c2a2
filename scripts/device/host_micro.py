"""Host microseconds per fused layer, taken apart: where does a FORGE backward's enqueue time go?

A stack of ``LAYERS`` bf16 linears (``DIM`` x ``DIM``, ``TOKENS`` tokens) small enough that
the GPU never paces the host. Each arm times the host side of forward and of backward
(no synchronization inside either), per layer, median of ``REPS`` iterations:

  linear          nn.Linear, weights trainable (C++ autograd: dX and dW GEMMs)
  linear_frozen   nn.Linear, weights frozen (C++ autograd: dX GEMM only)
  function_dx     a bare Python autograd.Function whose backward is dX only
  forge           forge_mcore.patch(): the full fused path
  forge_nolaunch  the same with the kernel launch itself replaced by nothing
  forge_noengine  the same with engine.backward replaced by nothing (Function + dX only)

Then the pieces of one launch (µs per call): ``ops.fused_wgrad_step`` alone, through its
replay and through the full path, the bound launch alone, building one TensorDescriptor,
encoding it (``make_tensordesc_arg``), and Triton's specialization of one argument. Prints
JSON lines and a cProfile of one FORGE backward.

    python scripts/device/host_micro.py            # device machine
    DEVICE=cpu REPS=3 python scripts/device/host_micro.py   # CPU smoke (torch backend; no launch pieces)
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import forge_mcore  # noqa: E402
from forge_mcore import engine as engine_mod  # noqa: E402
from forge_mcore import ops  # noqa: E402

DEVICE = os.environ.get("DEVICE", "cuda")
LAYERS = int(os.environ.get("LAYERS", "64"))
DIM = int(os.environ.get("DIM", "512"))
TOKENS = int(os.environ.get("TOKENS", "64"))
REPS = int(os.environ.get("REPS", "30"))


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


class DxOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return F.linear(x, w)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        return dy @ w, None


class DxOnlyLinear(nn.Linear):
    def forward(self, x):
        return DxOnly.apply(x, self.weight)


def build(linear_cls=nn.Linear) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(*[linear_cls(DIM, DIM, bias=False) for _ in range(LAYERS)]).to(DEVICE, torch.bfloat16)


def time_arm(model: nn.Sequential, step=None) -> dict:
    x = torch.randn(TOKENS, DIM, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    fwd, bwd = [], []
    for i in range(5 + REPS):
        sync()
        t0 = time.perf_counter()
        loss = model(x).float().sum()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        sync()
        if step is not None:
            step()
        x.grad = None
        for p in model.parameters():
            p.grad = None
        if i >= 5:
            fwd.append((t1 - t0) * 1e6 / LAYERS)
            bwd.append((t3 - t2) * 1e6 / LAYERS)
    return {"fwd_us_per_layer": round(statistics.median(fwd), 1), "bwd_us_per_layer": round(statistics.median(bwd), 1)}


def forge_model():
    model = build()
    probe = (torch.randn(TOKENS, DIM, device=DEVICE, dtype=torch.bfloat16),)
    opt = forge_mcore.patch(model, "adamw", "bf16", lr=1e-4, clip="none", probe_inputs=probe)
    return model, opt


def main() -> None:
    rows = []

    def emit(arm, **fields):
        row = {"arm": arm, **fields}
        rows.append(row)
        print(json.dumps(row), flush=True)

    emit("linear", **time_arm(build()))
    frozen = build()
    frozen.requires_grad_(False)
    emit("linear_frozen", **time_arm(frozen))
    emit("function_dx", **time_arm(build(DxOnlyLinear)))
    model, opt = forge_model()
    emit("forge", **time_arm(model, opt.step))

    if DEVICE == "cuda":  # every launch is a replay by now
        from forge_mcore.kernels.launch import BoundLaunch

        real = BoundLaunch.__call__
        BoundLaunch.__call__ = lambda self, stream, *values: None
        try:
            emit("forge_nolaunch", **time_arm(model, opt.step))
        finally:
            BoundLaunch.__call__ = real
    real_backward = engine_mod.ForgeEngine.backward
    engine_mod.ForgeEngine.backward = lambda self, handle, dy, x: None
    try:
        emit("forge_noengine", **time_arm(model, opt.step))
    finally:
        engine_mod.ForgeEngine.backward = real_backward

    if DEVICE == "cuda":
        launch_pieces(model, opt, emit)

    x = torch.randn(TOKENS, DIM, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    loss = model(x).float().sum()
    sync()
    prof = cProfile.Profile()
    prof.enable()
    loss.backward()
    prof.disable()
    sync()
    opt.step()
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(30)


def per_call_us(fn, n: int = 2000) -> float:
    for _ in range(20):
        fn()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n // 5):
            fn()
        samples.append((time.perf_counter() - t0) * 1e6 / (n // 5))
    return round(statistics.median(samples), 2)


def launch_pieces(model, opt, emit) -> None:
    from triton._C.libtriton import native_specialize_impl
    from triton.runtime.driver import driver
    from triton.tools.tensor_descriptor import TensorDescriptor

    engine = opt.engine
    handle = engine.managed[0]
    dy = torch.randn(TOKENS, DIM, device=DEVICE, dtype=torch.bfloat16)
    x = torch.randn(TOKENS, DIM, device=DEVICE, dtype=torch.bfloat16)
    hyper = engine._prepare(handle)
    telemetry = engine._telemetry(handle)

    def step():
        ops.fused_wgrad_step(dy, x, handle.weight, handle.state, hyper, telemetry=telemetry)

    emit("piece_fused_wgrad_step_replay", us=per_call_us(step, 500))
    ops.launch_observer = lambda *args: None  # forces the full path
    try:
        emit("piece_fused_wgrad_step_full", us=per_call_us(step, 500))
    finally:
        ops.launch_observer = None
    replay = handle.state.launch_cache.get(ops._Replay)
    if replay is not None:
        stream = torch._C._cuda_getCurrentRawStream(dy.get_device())
        emit("piece_bound_launch", us=per_call_us(lambda: replay.bound(stream, dy, x, telemetry.sumsq), 500))
        desc, meta = next(((d, m) for _, d, m in replay.bound.slots if d is not None), (None, None))
        if meta:
            emit("piece_make_tensordesc_arg", us=per_call_us(lambda: replay.bound.make_tensordesc_arg(desc, meta)))
    backend = ops._direct_launcher().kernel.device_caches[torch.cuda.current_device()][3]
    emit("piece_descriptor_from_tensor", us=per_call_us(lambda: TensorDescriptor.from_tensor(dy, [64, 64])))
    for name, arg in (("tensor", dy), ("int", 4096)):
        specialize = lambda arg=arg: native_specialize_impl(backend, arg, False, True, True)  # noqa: E731
        emit(f"piece_specialize_{name}", us=per_call_us(specialize))
    emit("piece_current_stream", us=per_call_us(lambda: driver.active.get_current_stream(0)))
    emit("piece_matmul", us=per_call_us(lambda: dy @ handle.weight))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
