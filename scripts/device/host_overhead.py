"""Is the FORGE step host-bound? Qwen3-8B, batch 1, seq 512, fused AdamW vs FORGE bf16 states.

Per arm, after warm-up: the step's wall time; how long the host took to *enqueue* the
backward (``loss.backward()`` returns before the GPU finishes; if enqueueing takes as
long as the GPU work, the GPU is starved by Python/launch overhead); and, from one
profiled step, the summed device time of all kernels. Prints one JSON line per arm.

    python scripts/device/host_overhead.py            # device machine
    PROFILE=1 python scripts/device/host_overhead.py forge-bf16   # + where the host spends the backward
    MODEL=qwen3-tiny DEVICE=cpu python scripts/device/host_overhead.py vanilla forge-bf16   # CPU check
    INTERLEAVE=1 python scripts/device/host_overhead.py fused forge-bf16   # step time, arms alternating
    INTERLEAVE=1 python scripts/device/host_overhead.py forge-bf16 forge-bf16:triton   # with/without Gluon

With ``INTERLEAVE=1`` every arm is built in this process at once (fused AdamW and FORGE
bf16 at Qwen3-8B: ~111 GB together) and the timed steps alternate between them, the
order reversed each round: this host's speed drifts by 20-40% within a minute, and arms
timed one after the other carry that drift into their ratio. Prints one JSON line per
arm: the median step and every step.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from forge_mcore.bench.e2e import _make_arm  # noqa: E402
from forge_mcore.models import build_model, example_batch, training_loss  # noqa: E402


def measure(arm: str, model_name: str, device: str, steps: int = 5) -> dict:
    model = build_model(model_name, dtype=torch.bfloat16, device=device, seed=0)
    model.config.use_cache = False
    opt_step, _ = _make_arm(arm, model)
    batch = example_batch(model, 1, 512 if device == "cuda" else 8, generator=torch.Generator().manual_seed(0))
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    walls, enqueue_bwd, bwd = [], [], []
    for i in range(3 + steps):
        sync()
        t0 = time.perf_counter()
        loss = training_loss(model, batch)
        sync()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        sync()
        t3 = time.perf_counter()
        opt_step_only(opt_step)
        sync()
        t4 = time.perf_counter()
        if i >= 3:
            walls.append((t4 - t0) * 1e3)
            enqueue_bwd.append((t2 - t1) * 1e3)
            bwd.append((t3 - t1) * 1e3)
    if device != "cuda":
        return {"arm": arm, "step_ms": statistics.median(walls)}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        loss = training_loss(model, batch)
        loss.backward()
        opt_step_only(opt_step)
        sync()
    kernels_ms = sum(e.self_device_time_total for e in prof.key_averages()) / 1e3
    if os.environ.get("PROFILE") == "1":
        profile_backward(model, batch, opt_step)
    del model
    torch.cuda.empty_cache()
    return {"arm": arm, "step_ms": statistics.median(walls), "backward_ms": statistics.median(bwd),
            "backward_enqueue_ms": statistics.median(enqueue_bwd), "kernels_ms_per_step": kernels_ms}


def profile_backward(model, batch, step_fn) -> None:
    """Print the synchronizing calls (torch's sync debug mode) and a cProfile of one backward."""
    import cProfile
    import pstats
    import traceback
    import warnings

    syncs: list[list[str]] = []

    def record(message, *args, **kwargs):
        if "synchroniz" in str(message).lower():
            syncs.append(traceback.format_stack(limit=10)[:-1])

    loss = training_loss(model, batch)
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = record
        torch.cuda.set_sync_debug_mode("warn")
        try:
            loss.backward()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    print(json.dumps({"synchronizing_calls_in_backward": len(syncs)}), flush=True)
    if syncs:
        print("first synchronizing call:\n" + "".join(syncs[0]), flush=True)
    opt_step_only(step_fn)
    print(json.dumps(timed_host_sections(model, batch, step_fn)), flush=True)
    loss = training_loss(model, batch)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as cpu_prof:
        loss.backward()
    torch.cuda.synchronize()
    opt_step_only(step_fn)
    print(cpu_prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20), flush=True)
    loss = training_loss(model, batch)
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    loss.backward()
    prof.disable()
    torch.cuda.synchronize()
    opt_step_only(step_fn)
    stats = pstats.Stats(prof, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(25)


def timed_host_sections(model, batch, step_fn) -> dict:
    """Host microseconds per call inside one backward, for the FORGE layers' nested sections
    (wall clock around each, no profiler): where the enqueue time goes."""
    from forge_mcore import engine, ops
    from forge_mcore.kernels.launch import DirectLauncher
    from forge_mcore.nn.linear import ForgeLinearFunction

    sections = {
        "linear_backward": (ForgeLinearFunction, "backward", True),
        "engine_backward": (engine.ForgeEngine, "backward", False),
        "fused_wgrad_step": (ops, "fused_wgrad_step", False),
        "launch": (DirectLauncher, "__call__", False),
        "prepare_iteration": (engine.ForgeEngine, "_prepare_iteration", False),
    }
    totals = {name: [0.0, 0] for name in sections}
    originals = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[name][0] += time.perf_counter() - t0
                totals[name][1] += 1
        return wrapper

    for name, (owner, attr, static) in sections.items():
        fn = owner.__dict__[attr] if static else getattr(owner, attr)
        originals[name] = (owner, attr, fn)
        inner = fn.__func__ if static else fn
        setattr(owner, attr, staticmethod(timed(name, inner)) if static else timed(name, inner))
    try:
        loss = training_loss(model, batch)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss.backward()
        enqueue = time.perf_counter() - t0
        torch.cuda.synchronize()
        opt_step_only(step_fn)
    finally:
        for owner, attr, fn in originals.values():
            setattr(owner, attr, fn)
    out = {"backward_enqueue_ms": round(enqueue * 1e3, 2)}
    for name, (total, calls) in totals.items():
        out[name] = {"calls": calls, "ms": round(total * 1e3, 2), "us_per_call": round(total / max(calls, 1) * 1e6, 1)}
    return out


def opt_step_only(step_fn) -> None:
    """The arm's optimizer step without its backward (the arms' step(loss) does both)."""
    step_fn(_NoBackward())


class _NoBackward:
    def backward(self) -> None:
        pass


def measure_interleaved(arms: list[str], model_name: str, device: str, steps: int = 20) -> list[dict]:
    built = []
    for arm in arms:
        model = build_model(model_name, dtype=torch.bfloat16, device=device, seed=0)
        model.config.use_cache = False
        built.append((arm, model, _make_arm(arm, model)[0]))
    batch = example_batch(built[0][1], 1, 512 if device == "cuda" else 8,
                          generator=torch.Generator().manual_seed(0))
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    for round_ in range(3 + steps):
        for arm, model, step_fn in built if round_ % 2 == 0 else built[::-1]:
            sync()
            t0 = time.perf_counter()
            step_fn(training_loss(model, batch))
            sync()
            if round_ >= 3:
                times[arm].append((time.perf_counter() - t0) * 1e3)
    return [{"arm": arm, "interleaved": True, "step_ms": statistics.median(t), "step_ms_all": [round(x, 2) for x in t]}
            for arm, t in times.items()]


if __name__ == "__main__":
    model_name, device = os.environ.get("MODEL", "qwen3-8b"), os.environ.get("DEVICE", "cuda")
    arms = sys.argv[1:] or ["fused", "forge-bf16"]
    if os.environ.get("INTERLEAVE") == "1":
        for row in measure_interleaved(arms, model_name, device):
            print(json.dumps(row), flush=True)
    else:
        for arm in arms:
            print(json.dumps(measure(arm, model_name, device)), flush=True)
