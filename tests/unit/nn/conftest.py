"""The nn suite runs tiny models: one intra-op thread is faster on a shared 2-core machine
(OpenMP spin-waits dominate at these sizes) and keeps the runs deterministic."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
