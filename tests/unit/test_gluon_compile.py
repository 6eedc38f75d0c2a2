"""The Gluon kernel (``kernels/gluon_wgrad.py``) cannot run under the interpreter: this checks,
without a GPU, that every Gluon config still compiles for sm_90 with AdamW (and its main-loop-only
and traced variants), each rule family on one config per Gluon kernel, and at a
row stride that is a multiple of 8 elements but not 16 (Triton's compiler and ptxas,
``scripts/compile_check.py --gluon --sass``, in two shards), and that its SASS
has no GPU-scope fence (the telemetry atomics are relaxed: acq_rel fenced each tile's add, up to
19% of the step, ``docs/perf_log.md`` row 15). Their numerics are tested on the GPU
(``tests/functional/test_kernel_gpu.py::test_gluon_kernel_*``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from forge_mcore.kernels.configs import GLUON_KERNELS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_gluon_config_compiles_for_sm90_with_every_rule_family():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # two halves side by side, one per CPU core (each is minutes of ptxas); what they compile is checked as one
    # list, since which variants fall in which half moves whenever a config is added
    halves = [subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "compile_check.py"), "--gluon", "--sass",
                                "--shard", f"{i}/2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env) for i in range(2)]
    try:
        outputs = [half.communicate(timeout=900) for half in halves]
    finally:
        for half in halves:
            half.kill()
    stdout = "".join(out for out, _ in outputs)
    lines = [line for line in stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    errors = "".join(err[-2000:] for _, err in outputs)
    assert all(half.returncode == 0 for half in halves) and lines, stdout[-4000:] + errors
    assert not [line for line in lines if line.startswith("FAIL")]
    # each rule family with the Gluon kernel, on the TMA path
    for kernel in GLUON_KERNELS:
        assert sum(f" {kernel}:" in line for line in lines) >= 5, (kernel, lines)
    assert all(" sass " in line and "MEMBAR.GPU=" not in line for line in lines), lines
    # (a cp.async tile producer once compiled at the strides above and failed on the GPU at this one)
    assert [line for line in lines if " 200x776 " in line and " gluon_ws:" in line], lines


def test_int8_codes_move_sixteen_bytes_at_a_time_without_shuffles():
    """The int8 codes' stored order (``gluon_wgrad._fragment_layout``, ``blockwise.fragment_to_logical``)
    lets a thread load and store its 16 codes of a row in one 16-byte access, and the relabelling to
    the wgmma layout moves no data: no shuffle or barrier beyond the plain load's
    (``scripts/probe_fragment_codes.py``, compile-only)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "probe_fragment_codes.py")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    counts = {line[:14].strip(): ast.literal_eval(line[15:]) for line in run.stdout.splitlines()}
    plain, fragment = counts["wgmma layout"], counts["fragment order"]
    assert fragment.get("LDS.128") == 2 and fragment.get("STS.128") == 2, fragment
    assert not [op for op in fragment if op.startswith(("LDS.U", "STS.U", "SHFL"))], fragment
    assert fragment.get("BAR.SYNC.DEFER_BLOCKING", 0) <= plain.get("BAR.SYNC.DEFER_BLOCKING", 0), (plain, fragment)
