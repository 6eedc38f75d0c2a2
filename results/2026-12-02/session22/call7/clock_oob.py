"""Session 22 call 7 (with call4/oob_tiles.patch applied): scripts/device/clock_probe.py's windows (SM clock
and board power while one arm's graph replays back to back for 2 s) at BT <= 1024, with an "oob:<arm>"
arm: the step on weights whose descriptors cover one tile (no tile bytes in L2 or HBM). Does the step's
main loop run slower beside its tile traffic because the SM clock drops (power), or at the same clock?"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.getcwd(), "scripts", "device"))
import clock_probe  # noqa: E402

import forge_mcore as fm  # noqa: E402
from forge_mcore.bench.common import capture_graph  # noqa: E402
from forge_mcore.bench.kernel import ForgeArm  # noqa: E402
from forge_mcore.kernels import gluon_wgrad  # noqa: E402

plain = clock_probe.graph_of


def graph_of(shape: str, bt: int, arm: str):
    if not arm.startswith("oob:"):
        return plain(shape, bt, arm)
    forge = ForgeArm.build(shape, bt, arm.removeprefix("oob:"))
    gluon_wgrad.DIAG_OOB_WEIGHTS.update(w.data_ptr() for w in forge.weights)
    calls = forge.steps(fm.StepTelemetry.zeros("cuda"))
    calls[0]()
    return *capture_graph(calls), (forge, calls)


clock_probe.graph_of = graph_of
clock_probe.CELLS = [(shape, int(bt), ("adamw-bf16", "oob:adamw-bf16", "mainloop:adamw-bf16", "cublas"))
                     for shape, bt in (("4096x4096", 512), ("4096x4096", 1024), ("1024x4096", 1024))]
clock_probe.main()
