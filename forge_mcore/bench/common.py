"""Measurement helpers shared by the benchmarks (device machine only).

Method (/work/.library/device/METHOD.md): ceilings measured in the same
process as the arms; each arm captured in a CUDA graph that walks through
enough rotating buffer sets to defeat the 60 MB L2, replayed >= 30 times and
timed with events; the median per call is reported.
"""

from __future__ import annotations

import csv
import json
import platform
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch

from forge_mcore.kernels.winners import arch_of

L2_BYTES = 60 * 2**20


@dataclass
class Ceilings:
    copy_gbps: float  # device-to-device copy, bytes read + written per second / 1e9
    bf16_tflops: float  # cuBLAS bf16 8192^3


def _copy_ms(n: int, device: str) -> float:
    src = torch.randn(n, dtype=torch.bfloat16, device=device)
    dst = torch.empty_like(src)
    # A memcpy node in a CUDA graph may run on the copy engines (slower than the
    # SMs); take the best of that, an eager copy and an SM elementwise kernel.
    return min(time_graph(lambda: dst.copy_(src), reps=30), time_eager(lambda: dst.copy_(src)),
               time_graph(lambda: torch.neg(src, out=dst), reps=30))


def _mm_ms(n: int, device: str) -> float:
    a = torch.randn(n, n, dtype=torch.bfloat16, device=device)
    b = torch.randn(n, n, dtype=torch.bfloat16, device=device)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=device)
    return time_graph(lambda: torch.mm(a, b, out=c), reps=30)


def measure_ceilings(device: str = "cuda") -> Ceilings:
    n = 2**30  # 1 Gi bf16 elements: 2 GiB each way
    copy_ms, mm_ms = _copy_ms(n, device), _mm_ms(8192, device)
    return Ceilings(copy_gbps=2 * n * 2 / (copy_ms * 1e-3) / 1e9, bf16_tflops=2 * 8192**3 / (mm_ms * 1e-3) / 1e12)


# GPU cycles spun before each timed replay (~100 us at 1.98 GHz): the host submits the graph while
# the GPU is still busy, so the replay starts the moment the start event is recorded.
LEAD_CYCLES = 200_000


def time_graph(fns: Callable[[], object] | list[Callable[[], object]], reps: int = 30, warmup: int = 3,
               lead_cycles: int = LEAD_CYCLES) -> float:
    """Median milliseconds of one call, for a list of equivalent calls over
    rotating buffers (the graph replays them all; the time is divided by their
    number). Everything is captured in one CUDA graph, so host overhead is out.

    Each replay is queued behind a ``lead_cycles`` spin, so the interval between the events
    is the graph's own GPU time. With ``lead_cycles=0`` (the method before session 17) an idle
    GPU records the start event at once and waits for the host to submit the replay, and
    that submission latency counts as the calls' time (``scripts/device/timing_lead.py``)."""
    return time_graphs({"": fns}, reps, warmup, lead_cycles)[""]


def time_graphs(arms: dict[str, Callable[[], object] | list[Callable[[], object]]], reps: int = 30,
                warmup: int = 3, lead_cycles: int = LEAD_CYCLES) -> dict[str, float]:
    """``time_graph`` of several arms with their replays interleaved: each repetition replays
    every arm's graph once, in reversed order every other repetition, so the clock and
    temperature drift of a long measurement (seen at BT 16384: the same cuBLAS GEMM 12% apart
    within one call) falls on all arms alike. Returns each arm's median ms per call."""
    graphs = {name: capture_graph(fns, warmup) for name, fns in arms.items()}
    times: dict[str, list[float]] = {name: [] for name in arms}
    for rep in range(reps):
        for name in (list(arms) if rep % 2 == 0 else list(arms)[::-1]):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if lead_cycles:
                torch.cuda._sleep(lead_cycles)
            start.record()
            graphs[name][0].replay()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / graphs[name][1])
    del graphs
    return {name: statistics.median(t) for name, t in times.items()}


def capture_graph(fns: Callable[[], object] | list[Callable[[], object]], warmup: int = 3
                  ) -> tuple[torch.cuda.CUDAGraph, int]:
    """The calls warmed up on a side stream, then captured in one CUDA graph (replayed once);
    returns it and the number of calls."""
    calls = fns if isinstance(fns, list) else [fns]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            for f in calls:
                f()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for f in calls:
            f()
    graph.replay()
    torch.cuda.synchronize()
    return graph, len(calls)


def time_eager(fn: Callable[[], object], reps: int = 30, warmup: int = 3) -> float:
    """Median milliseconds of ``fn`` launched eagerly (for long calls only: launch gaps count)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def rotation_count(bytes_per_set: int, minimum: int = 1, maximum: int = 8) -> int:
    """Buffer sets needed so one replay streams at least twice the L2."""
    return max(minimum, min(maximum, -(-2 * L2_BYTES // max(bytes_per_set, 1))))


def environment() -> dict:
    import triton

    props = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None
    uuid = getattr(props, "uuid", None)
    return {
        "torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
        "device": props.name if props else "cpu",
        # the card itself, as nvidia-smi names it: cards of one kind have ranked the same tile configs
        # apart (docs/kernel.md, "On an H100"), so a measurement is tied to its card
        "card": f"GPU-{uuid}" if uuid else "",
        "sms": props.multi_processor_count if props else 0,
        "arch": arch_of(0) if props else "",
    }


def write_json(path: str, obj: object) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)


def write_csv(path: str, rows: list[dict]) -> None:
    """Rows of one shape as a CSV, the columns the first row's keys."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
