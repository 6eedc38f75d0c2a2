"""Run test scenarios on spawned gloo ranks with megatron-core on the CPU.

A scenario is ``fn(rank, world_size) -> value``, registered with
``@on_ranks(world_size)``; it sets up and tears down megatron's parallel state
itself. The session fixture ``rank_results`` (conftest.py) runs every
registered scenario of one world size in a single spawn -- the ranks pay the
torch/megatron imports once -- joined in one gloo group on a free TCP port,
inside ``megatron_on_cpu()``. A failing scenario records its ranks'
tracebacks and the next one runs; a spawn that does not finish within its
timeout is killed with everything it started, so nothing can hang the suite.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import socket
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch.multiprocessing as mp

FAILED = "FAILED"
REGISTERED: dict[int, list[Callable]] = {}
# Collectives on megatron's groups give up after this long instead of hanging.
COLLECTIVE_TIMEOUT_MINUTES = 1


def on_ranks(world_size: int) -> Callable[[Callable], Callable]:
    """Register a scenario to run on ``world_size`` spawned ranks."""

    def register(fn: Callable) -> Callable:
        fn.world_size = world_size
        REGISTERED.setdefault(world_size, []).append(fn)
        return fn

    return register


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, scenarios: list[Callable], queue) -> None:
    import warnings

    os.setsid()  # a process group of its own: the parent can reap whatever it starts

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    import torch.distributed as dist
    from megatron.core import parallel_state

    from forge_mcore.tensor_parallel.testing import megatron_on_cpu

    results: dict[str, Any] = {}
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(minutes=COLLECTIVE_TIMEOUT_MINUTES))
        with megatron_on_cpu():
            for scenario in scenarios:
                try:
                    results[scenario.__name__] = scenario(rank, world_size)
                except BaseException:  # noqa: BLE001  (reported to the parent)
                    results[scenario.__name__] = (FAILED, f"rank {rank}:\n{traceback.format_exc()}")
                finally:
                    if parallel_state.model_parallel_is_initialized():
                        parallel_state.destroy_model_parallel()
        dist.destroy_process_group()
    except BaseException:  # noqa: BLE001
        results["<setup>"] = (FAILED, f"rank {rank}:\n{traceback.format_exc()}")
    queue.put((rank, results))


def run_scenarios(scenarios: list[Callable], world_size: int, timeout: float = 120.0) -> dict[str, Any]:
    """{scenario name: rank 0's return value, or (FAILED, traceback) if any rank failed}."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = _free_port()
    # Not daemonic: megatron's checkpoint writer starts processes of its own. The finally below
    # reaps them on every exit path.
    procs = [ctx.Process(target=_worker, args=(r, world_size, port, scenarios, queue))
             for r in range(world_size)]
    for p in procs:
        p.start()
    per_rank: dict[int, dict] = {}
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=timeout)
    try:
        while len(per_rank) < world_size:
            remaining = (deadline - datetime.datetime.now()).total_seconds()
            if remaining <= 0:
                raise TimeoutError(f"ranks {sorted(set(range(world_size)) - set(per_rank))} did not finish "
                                   f"within {timeout} s")
            try:
                rank, results = queue.get(timeout=min(remaining, 1.0))
                per_rank[rank] = results
            except Exception:  # queue.Empty: check that nobody died silently
                dead = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in per_rank]
                if dead:
                    raise RuntimeError(f"rank(s) {dead} exited with code {procs[dead[0]].exitcode}") from None
    finally:
        for p in procs:
            p.join(timeout=5)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)  # the rank and anything it left running (checkpoint writers)
            p.join()
    merged: dict[str, Any] = {}
    for name in [s.__name__ for s in scenarios] + ["<setup>"]:
        failures = [per_rank[r][name] for r in sorted(per_rank) if isinstance(per_rank[r].get(name), tuple)
                    and per_rank[r][name][:1] == (FAILED,)]
        if failures:
            merged[name] = (FAILED, "\n".join(f[1] for f in failures))
        elif name in per_rank[0]:
            merged[name] = per_rank[0][name]
    return merged


def check(results: dict[str, Any], scenario: Callable) -> Any:
    """Rank 0's value of ``scenario``; fail the test with the ranks' tracebacks if it failed."""
    if "<setup>" in results:
        raise AssertionError(results["<setup>"][1])
    value = results[scenario.__name__]
    if isinstance(value, tuple) and value[:1] == (FAILED,):
        raise AssertionError(f"{scenario.__name__} failed:\n{value[1]}")
    return value
