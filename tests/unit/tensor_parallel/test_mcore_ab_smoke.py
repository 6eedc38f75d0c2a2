"""The GPU A/B script's code path, at toy shapes on two CPU ranks (``--smoke``)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys

import pytest

TIMEOUT = 240


def test_mcore_ab_smoke_runs_every_two_rank_cell(tmp_path):
    out = tmp_path / "mcore_ab"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "forge_mcore.bench.mcore_ab", "--smoke", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        log, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # torchrun and the ranks it started
        log, _ = proc.communicate()
        pytest.fail(f"mcore_ab --smoke did not finish in {TIMEOUT} s:\n{log[-4000:]}")
    assert proc.returncode == 0, log[-4000:]
    rows = list(csv.DictReader(open(out / "summary.csv")))
    assert {r["cell"] for r in rows} == {"tp2", "tp2-sp", "ep2", "memory"}
    gated = [r for r in rows if r["metric"] == "max |dloss|" and r["gate"] not in ("", "None")]
    assert gated and all(r["passed"] == "True" for r in gated), rows
