"""Session 22 call 8 (with call4/oob_tiles.patch applied): call 7's windows (scripts/device/clock_probe.py:
SM clock and board power while one arm's graph replays back to back for 2 s) with two more arms: "copy"
(Tensor.copy_ of the step's weight and state bytes, the step's rotation of sets) and "sleep" (a spinning
one-thread kernel: the board's power with the SMs clocked and nothing moving), for an energy bound on
the step under the power cap."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.getcwd(), "scripts", "device"))
import clock_probe  # noqa: E402
import torch  # noqa: E402

import forge_mcore as fm  # noqa: E402
from forge_mcore.bench.common import capture_graph  # noqa: E402
from forge_mcore.bench.kernel import ForgeArm  # noqa: E402
from forge_mcore.kernels import gluon_wgrad  # noqa: E402

plain = clock_probe.graph_of


def graph_of(shape: str, bt: int, arm: str):
    if arm == "sleep":
        return *capture_graph(lambda: torch.cuda._sleep(1_000_000)), None
    if arm == "copy":
        forge = ForgeArm.build(shape, bt, "adamw-bf16")
        tile_bytes = (forge.bytes_moved - forge.dy.nbytes - forge.x.nbytes) // 2
        pairs = [(torch.empty(tile_bytes, device="cuda", dtype=torch.uint8),
                  torch.empty(tile_bytes, device="cuda", dtype=torch.uint8)) for _ in forge.weights]
        return *capture_graph([lambda s=s, t=t: t.copy_(s) for s, t in pairs]), pairs
    if not arm.startswith("oob:"):
        return plain(shape, bt, arm)
    forge = ForgeArm.build(shape, bt, arm.removeprefix("oob:"))
    gluon_wgrad.DIAG_OOB_WEIGHTS.update(w.data_ptr() for w in forge.weights)
    calls = forge.steps(fm.StepTelemetry.zeros("cuda"))
    calls[0]()
    return *capture_graph(calls), (forge, calls)


clock_probe.graph_of = graph_of
ARMS = ("adamw-bf16", "oob:adamw-bf16", "mainloop:adamw-bf16", "cublas", "copy", "sleep")
clock_probe.CELLS = [(shape, int(bt), ARMS)
                     for shape, bt in (("4096x4096", 1024), ("12288x4096", 1024), ("1024x4096", 512))]
clock_probe.main()
