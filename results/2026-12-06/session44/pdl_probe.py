"""Session 44 probe: does the next step's main loop fill the last step's tail? (``FORGE_PDL=2``)

At PDL 1 (the default) every partition of a step waits for the previous grid before its first
global access, so back to back the next step's programs, placed on the SMs this one frees early,
only run their launch and prologue under its last SMs. At PDL 2 only the tile producer waits (then
lets the next kernel launch); the slab producer streams dY/X at once and each consumer waits after
its unit's main loop, so the first units' main loops run under the previous step's tail. Safe only
where the previous kernel is a FORGE step launched the same way and nothing between them writes dY
or X: a probe, not a mode.

Per cell, in one process: (1) bits: two copies of the cell's sets stepped in one stream with no
syncs, rotating and then one weight back to back, at PDL 1 and at PDL 2: every weight and state must
be equal; (2) time: graphs of L calls over the rotation sets at PDL 1 and 2, interleaved
(``time_graphs``), fitted to per graph + per call, with the grid's graph (one call per set) as % of
floor against ceilings measured in the same call.

    git apply results/2026-12-06/session44/pdl_early_slabs.patch   # FORGE_PDL=2 in gluon_wgrad (not kept)
    python3 results/2026-12-06/session44/pdl_probe.py   # device; env CELLS, LENGTHS, REPS; $OUT
"""

from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "device"))

from graph_length import fit  # noqa: E402

import forge_mcore as fm  # noqa: E402
from forge_mcore import ops  # noqa: E402
from forge_mcore.bench.common import measure_ceilings, time_graphs, write_csv  # noqa: E402
from forge_mcore.bench.kernel import ForgeArm  # noqa: E402
from forge_mcore.kernels import gluon_wgrad  # noqa: E402

CELLS = os.environ.get("CELLS", "1024x4096:512:sgdm-bf16;1024x4096:1024:sgdm-bf16;1024x4096:512:adamw-bf16;"
                                "1024x4096:1024:adamw-bf16;1024x4096:512:lion-bf16;4096x4096:1024:lion-bf16;"
                                "4096x4096:1024:adamw-bf16")
LENGTHS = [int(n) for n in os.environ.get("LENGTHS", "1,3,6,12").split(",")]
REPS = int(os.environ.get("REPS", 30))


def at_pdl(mode: int, fn):
    def call():
        gluon_wgrad.PDL = mode  # read by each launch (its plan key and the kernel's constexpr)
        return fn()
    return call


def tensors(arm: ForgeArm) -> list[torch.Tensor]:
    out = []
    for w, s in zip(arm.weights, arm.states):
        out.append(w)
        for slot in s.state_dict()["states"].values():
            out += [v for v in slot.values() if isinstance(v, torch.Tensor)]
    return out


def bits_equal(shape: str, bt: int, name: str, config) -> bool:
    arms = {mode: ForgeArm.build(shape, bt, name) for mode in (1, 2)}
    for mode, arm in arms.items():
        tel = fm.StepTelemetry.zeros("cuda")
        steps = [at_pdl(mode, f) for f in arm.steps(tel, config)]
        for _ in range(3):
            for f in steps:
                f()
        for _ in range(4):
            steps[0]()
    torch.cuda.synchronize()
    gluon_wgrad.PDL = 1
    return all(torch.equal(a, b) for a, b in zip(tensors(arms[1]), tensors(arms[2])))


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    out = os.environ.get("OUT", ".")
    ceilings = measure_ceilings()
    print(f"copy {ceilings.copy_gbps:.0f} GB/s, bf16 {ceilings.bf16_tflops:.0f} TFLOP/s", flush=True)
    rows = []
    for cell in CELLS.split(";"):
        shape, bt, name = cell.split(":")
        bt = int(bt)
        arm = ForgeArm.build(shape, bt, name)
        tel = fm.StepTelemetry.zeros("cuda")
        arm.steps(tel)[0]()  # the committed winner, picked outside any graph
        # an explicit config: every call takes the full launch path, which reads gluon_wgrad.PDL (a
        # weight's replayed launch keeps the kernel it was first launched with: session 44's call 3
        # timed PDL 1 twice that way)
        config = ops.tuned_config(arm.dy, arm.weights[0], arm.states[0])
        steps = arm.steps(tel, config)
        equal = bits_equal(shape, bt, name, config)
        M, N = map(int, shape.split("x"))
        floor_us = 1e6 * max(arm.bytes_moved / (ceilings.copy_gbps * 1e9),
                             2 * M * N * bt / (ceilings.bf16_tflops * 1e12))
        sets = len(steps)
        lengths = sorted(set(LENGTHS) | {sets})
        graphs = {f"pdl{mode}:{n}": [at_pdl(mode, steps[i % sets]) for i in range(n)] for mode in (1, 2)
                  for n in lengths}
        ms = time_graphs(graphs, reps=REPS)
        gluon_wgrad.PDL = 1
        line = f"{cell} bits {'equal' if equal else 'DIFFER'} sets {sets} floor {floor_us:.2f} us"
        for mode in (1, 2):
            per_graph = [1000 * ms[f"pdl{mode}:{n}"] * n for n in lengths]
            overhead, steady = fit(lengths, per_graph)
            grid_us = 1000 * ms[f"pdl{mode}:{sets}"]
            rows.append(dict(cell=cell, pdl=mode, bits_equal=equal, sets=sets, floor_us=floor_us,
                             grid_us=grid_us, grid_pct_floor=100 * floor_us / grid_us, per_graph_us=overhead,
                             steady_us=steady, steady_pct_floor=100 * floor_us / steady,
                             us_per_call_by_length=" ".join(f"L{n}={t / n:.3f}" for n, t in zip(lengths, per_graph))))
            line += (f"\n  PDL {mode}: " + " ".join(f"L{n} {t / n:.2f}" for n, t in zip(lengths, per_graph))
                     + f" | fit {overhead:.2f} + {steady:.2f}/call ({100 * floor_us / steady:.1f}%)"
                     + f" | grid graph ({sets} calls) {grid_us:.2f} us/call, {100 * floor_us / grid_us:.1f}% of floor")
        print(line, flush=True)
    write_csv(os.path.join(out, "pdl_probe.csv"), rows)


if __name__ == "__main__":
    main()
