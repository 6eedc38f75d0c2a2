"""The SM clock and board power while one arm runs back to back: does a FORGE step lower the clock
against the cuBLAS wgrad alone? (int8 moments read 0.90-0.96x bf16's speed in the compute-bound
BT >= 4096 cells, where their fewer bytes cannot help and the longer rule could only cost
through the issue slots or the power limit; the LM head at BT 16384 is 0.94-1.01x its baseline
from grid to grid).

    python3 scripts/device/clock_probe.py     # device; -> $OUT/clock_probe.csv, a line per window printed
    CELLS="4096x4096:1024:adamw-bf16+adamw-bf16@kernel=gluon_tall,block_m=128+copy:adamw-bf16+sleep" \
        python3 scripts/device/clock_probe.py  # cells ";"-separated, a cell's arms "+"-separated

Per window, one arm's CUDA graph (``bench.kernel.ForgeArm``'s rotating sets for a step; with
``<arm>@field=value,...`` the step on its committed winner with those ``TileConfig`` fields
replaced; the step's kernel with its epilogue compiled out for ``mainloop:<arm>``; one ``dY^T X``
for cuBLAS; ``copy:<arm>``: ``Tensor.copy_`` of that arm's weight and state bytes, over the same
rotation; ``sleep``: a spinning one-thread kernel, the board with nothing moving) is replayed for
WINDOW_S seconds while ``nvidia-smi -lms 100`` samples the SM clock, power and temperature; the
first samples (the ramp) are dropped. The arms take turns, twice, in reversed order the second
time. (W - the sleep arm's W) x time is an arm's dynamic energy per step
(``results/2026-12-02/session22/power_bound.py``). Session 18 (call 9, before the ``mainloop``
arms): every arm at the ~690 W cap; 4096^2 BT 4096 cuBLAS 1575 MHz, AdamW bf16 1485-1515, int8
1650 (and 8% slower). Session 22 (calls 7-8): at BT 1024 on 4096^2 and 12288 x 4096 the step,
its main loop and cuBLAS all at the cap; a copy of the bytes ~440 W; idle 124 W.
"""

from __future__ import annotations

import csv
import os
import statistics
import subprocess
import time

import torch

import forge_mcore as fm
from forge_mcore import ops
from forge_mcore.bench.common import capture_graph
from forge_mcore.bench.kernel import ForgeArm, cell_operands

WINDOW_S = 2.0
DEFAULT_CELLS = [("4096x4096", 4096, ("adamw-bf16", "adamw-int8", "sgdm-bf16", "mainloop:adamw-bf16", "cublas")),
                 ("151936x4096", 16384, ("sgdm-bf16", "mainloop:sgdm-bf16", "cublas"))]


def parse_cells(text: str) -> list[tuple[str, int, tuple[str, ...]]]:
    """``"MxN:BT:arm+arm;..."`` -> [(shape, bt, arms)]."""
    cells = []
    for cell in filter(None, text.split(";")):
        shape, bt, arms = cell.split(":", 2)
        cells.append((shape, int(bt), tuple(arms.split("+"))))
    return cells


CELLS = parse_cells(os.environ["CELLS"]) if os.environ.get("CELLS") else DEFAULT_CELLS
QUERY = "clocks.sm,power.draw,temperature.gpu"


def graph_of(shape: str, bt: int, arm: str):
    """(graph, steps per replay, the operands it replays on: kept alive as long as the graph)."""
    if arm == "sleep":
        return *capture_graph(lambda: torch.cuda._sleep(1_000_000)), None
    if arm.startswith("copy:"):
        forge = ForgeArm.build(shape, bt, arm.removeprefix("copy:"))
        pairs = [(torch.empty(forge.tile_bytes, device="cuda", dtype=torch.uint8),
                  torch.empty(forge.tile_bytes, device="cuda", dtype=torch.uint8)) for _ in forge.weights]
        return *capture_graph([lambda s=s, t=t: t.copy_(s) for s, t in pairs]), pairs
    if arm == "cublas":
        dy, x, _ = cell_operands(shape, bt, "cuda")
        grad = torch.empty(dy.shape[1], x.shape[1], device="cuda", dtype=torch.bfloat16)
        return *capture_graph(lambda: torch.mm(dy.t(), x, out=grad)), (dy, x, grad)
    name, _, fields = arm.removeprefix("mainloop:").partition("@")
    forge = ForgeArm.build(shape, bt, name)
    calls = forge.steps(fm.StepTelemetry.zeros("cuda"))
    calls[0]()  # its config (the committed winner) chosen outside any graph
    dy, x, weight, state = forge.dy, forge.x, forge.weights[0], forge.states[0]
    config = ops.tuned_config(dy, weight, state)
    if fields:  # the winner with these TileConfig fields replaced
        config = config.replaced(fields)
        calls = forge.steps(fm.StepTelemetry.zeros("cuda"), config)
    if arm.startswith("mainloop:"):  # the step's kernel with its epilogue compiled out
        sink = torch.zeros(1, device="cuda")
        calls = [lambda: ops.wgrad_mainloop(dy, x, weight, sink=sink, config=config, state=state)]
    return *capture_graph(calls), (forge, calls)


def window(graph, n: int) -> tuple[float, list[list[float]]]:
    """Replays for WINDOW_S seconds under nvidia-smi sampling: (ms per step, samples)."""
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    replays, began = 0, time.time()
    start.record()
    while time.time() - began < WINDOW_S:
        graph.replay()
        replays += 1
        if replays % 8 == 0:
            torch.cuda.synchronize()  # keep the queue short: the window is GPU time
    end.record()
    end.synchronize()
    smi.terminate()
    lines = smi.communicate()[0].strip().splitlines()
    samples = [[float(v) for v in line.split(",")] for line in lines if line.count(",") == 2][3:]
    if not samples:
        raise SystemExit(f"nvidia-smi gave no samples in a {WINDOW_S} s window: {lines[:3]}")
    return start.elapsed_time(end) / (replays * n), samples


def main() -> None:
    out = os.environ.get("OUT", "/tmp/out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "clock_probe.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["shape", "bt", "arm", "turn", "ms_per_step", "sm_mhz_median", "sm_mhz_min", "power_w_median",
                         "temp_c_max", "samples"])
        for shape, bt, arms in CELLS:
            graphs = {arm: graph_of(shape, bt, arm) for arm in arms}
            for turn in range(2):
                for arm in (arms if turn == 0 else arms[::-1]):
                    graph, n, _operands = graphs[arm]
                    ms, samples = window(graph, n)
                    clocks, power, temp = zip(*samples)
                    row = [shape, bt, arm, turn, f"{ms:.4f}", statistics.median(clocks), min(clocks),
                           statistics.median(power), max(temp), len(samples)]
                    writer.writerow(row)
                    print(*row, flush=True)
            del graphs
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
