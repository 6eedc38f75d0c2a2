"""The Gluon kernel (``kernels/gluon_wgrad.py``) cannot run under the interpreter: this checks,
without a GPU, that every Gluon config still compiles for sm_90 with AdamW (and its main-loop-only
and traced variants), each rule family on one config per Gluon kernel, and at a
row stride that is a multiple of 8 elements but not 16 (Triton's compiler and ptxas,
``scripts/compile_check.py --gluon --sass``), and that its SASS
has no GPU-scope fence (the telemetry atomics are relaxed: acq_rel fenced each tile's add, up to
19% of the step, ``docs/perf_log.md`` row 15). Their numerics are tested on the GPU
(``tests/functional/test_kernel_gpu.py::test_gluon_kernel_*``)."""

from __future__ import annotations

import os
import subprocess
import sys

from forge_mcore.kernels.configs import GLUON_KERNELS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_gluon_config_compiles_for_sm90_with_every_rule_family():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compile_check.py"), "--gluon", "--sass"],
                         capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in run.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert run.returncode == 0 and lines, run.stdout[-4000:] + run.stderr[-4000:]
    assert not [line for line in lines if line.startswith("FAIL")]
    # each rule family with the Gluon kernel, on the TMA path
    for kernel in GLUON_KERNELS:
        assert sum(f" {kernel}:" in line for line in lines) >= 5, (kernel, lines)
    assert all(" sass " in line and "MEMBAR.GPU=" not in line for line in lines), lines
    # (a cp.async tile producer once compiled at the strides above and failed on the GPU at this one)
    assert [line for line in lines if " 200x776 " in line and " gluon_ws:" in line], lines
