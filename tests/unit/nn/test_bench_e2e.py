"""The end-to-end benchmark runs its whole pipeline on CPU (--smoke): processes, CSV, table."""

from __future__ import annotations

import csv
import math

from forge_mcore.bench import e2e


def test_smoke_run_writes_csv_and_prints_the_table_last(tmp_path, capsys):
    code = e2e.main(["--smoke", "--arms", "forge-bf16,galore", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    with open(tmp_path / "e2e_peer.csv") as f:
        rows = {r["arm"]: r for r in csv.DictReader(f)}
    assert list(rows) == ["fused", "forge-bf16", "galore"]  # the fused AdamW baseline is always run
    for arm in ("fused", "forge-bf16"):
        assert rows[arm]["status"] == "ok", rows[arm]["status"]
        assert math.isfinite(float(rows[arm]["step_ms"])) and float(rows[arm]["step_ms"]) > 0
    assert float(rows["fused"]["time_vs_fused"]) == 1.0
    assert float(rows["forge-bf16"]["coverage"]) > 0.8
    galore = rows["galore"]["status"]
    assert galore == "ok" or galore.startswith("not installed"), galore
    assert out.rstrip().splitlines()[-1].startswith("qwen3-tiny")  # the summary table comes last


def test_protocol_limits_are_enforced(capsys):
    import pytest

    with pytest.raises(SystemExit):
        e2e.parse_args(["--steps", "5"])
    assert "--steps >= 10" in capsys.readouterr().err


def test_host_overhead_interleaved_mode_times_every_arm_each_round():
    import json
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "device", "host_overhead.py")
    env = {**os.environ, "INTERLEAVE": "1", "MODEL": "qwen3-tiny", "DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, script, "fused", "forge-bf16"], env=env, capture_output=True, text=True,
                         timeout=240, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["arm"] for r in rows] == ["fused", "forge-bf16"]
    assert all(r["interleaved"] and len(r["step_ms_all"]) == 20 and r["step_ms"] > 0 for r in rows)
