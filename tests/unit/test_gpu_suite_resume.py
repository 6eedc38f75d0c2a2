"""``scripts/device/gluon_tests.sh`` resumes a GPU-test run stopped by its limit: the tests an earlier log shows
PASSED (in xdist's and in a single process's format) are deselected, a FAILED one runs again. On a CPU the
selected GPU tests skip, which is enough to see which were selected."""

from __future__ import annotations

import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "device", "gluon_tests.sh")
TEST = "tests/functional/test_kernel_gpu.py::test_every_codec_and_store_on_gpu"


def test_a_resumed_run_deselects_what_an_earlier_log_shows_passed(tmp_path):
    earlier = tmp_path / "earlier.log"
    earlier.write_text(f"[gw1] [ 10%] PASSED {TEST}[fp32-fp32] \n"
                       f"{TEST}[fp32-bf16] PASSED [ 20%]\n"
                       f"[gw0] [ 30%] FAILED {TEST}[fp32-bf16_sr] \n")
    env = dict(os.environ, OUT=str(tmp_path), NAME="resumed", DONE=str(earlier), WORKERS="0", TIMEOUT="120",
               SELECT="every_codec_and_store and fp32-", CUDA_VISIBLE_DEVICES="")
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    result = subprocess.run(["bash", SCRIPT], env=env, cwd=root, capture_output=True, text=True, timeout=180)
    assert "deselected as passed before: 2" in result.stdout, result.stdout + result.stderr
    log = (tmp_path / "resumed.log").read_text()
    ran = {line.split()[0] for line in log.splitlines() if line.startswith(TEST)}
    assert ran == {f"{TEST}[fp32-bf16_sr]", f"{TEST}[fp32-fp32_master]"}, log
