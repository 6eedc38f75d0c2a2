"""docs/mcore.md's example runs as written (one rank, CPU, under megatron_on_cpu)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import torch.distributed as dist

from .ranks import _free_port, on_ranks

DOC = Path(__file__).resolve().parents[3] / "docs" / "mcore.md"


@on_ranks(1)
def docs_example_runs(rank, world_size):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    dist.destroy_process_group()  # the example sets up its own, as a torchrun script does
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), RANK="0", WORLD_SIZE="1",
                      LOCAL_RANK="0")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__main__"})
    return out.getvalue()


def test_docs_example_runs(rank_results):
    printed = rank_results(docs_example_runs).splitlines()
    assert [line.split(":")[0] for line in printed] == [f"step {i}" for i in range(4)]
    assert all("nan" not in line for line in printed)
