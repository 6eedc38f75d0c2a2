"""The spawned-rank scenarios of this package, run once per world size per test run.

Under pytest-xdist every worker collects every scenario; the first worker that
needs a world size runs it and leaves the results in the run's shared temporary
directory for the others (the pattern pytest-xdist documents for session
fixtures that must run once).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from filelock import FileLock

from .ranks import REGISTERED, check, run_scenarios

# Seconds one spawn may take (all scenarios of a world size); collectives time out sooner.
SPAWN_TIMEOUT = 300


@pytest.fixture(scope="session")
def rank_results(tmp_path_factory) -> Callable[[Callable], Any]:
    """``rank_results(scenario)``: rank 0's value of a registered scenario (the spawn for its
    world size runs on first use); fails the test with every failing rank's traceback."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # one directory for all the workers of this run
    cache: dict[int, dict] = {}

    def result(scenario: Callable) -> Any:
        world_size = scenario.world_size
        if world_size not in cache:
            path = shared / f"tensor_parallel_ranks_{world_size}.pkl"
            with FileLock(f"{path}.lock"):
                if not path.exists():
                    path.write_bytes(pickle.dumps(run_scenarios(REGISTERED[world_size], world_size,
                                                                timeout=SPAWN_TIMEOUT)))
                cache[world_size] = pickle.loads(path.read_bytes())
        return check(cache[world_size], scenario)

    return result
