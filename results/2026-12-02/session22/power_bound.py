"""The power cap's bound on a fused step at BT <= 1024, from call 8's power windows and a grid's CSV.

    python results/2026-12-02/session22/power_bound.py [GRID_CSV] [CLOCK_CSV]
    (defaults: call2/grid_call/grid/kernel.csv and call8/clock_probe.csv; CPU only)

Linear energy model. With every arm drawing board power P for its time T, the work's dynamic energy
is (P - P_idle) x T (P_idle: the "sleep" arm, SMs clocked and idle). cuBLAS's wgrad of these shapes
runs at the cap (~690 W), and a copy of the weight and state bytes at ~440 W, each alone. A step
that does both inside the cap needs at least
    T >= (E_gemm + E_bytes) / (P_cap - P_idle) = T_cublas + bytes / R,
    R = (P_cap - P_idle) / (dynamic energy per byte of the copy),
where T_cublas comes from the grid (same call as the step) and R from call 8's copy windows. Lower
clocks cost less energy per operation (DVFS), so the bound is an estimate, not a proof; cells whose
cuBLAS wgrad runs below the cap (1024 x 4096) are bound by cycles, not power, and are marked.

Then, for the cells of call 8 (every arm measured back to back), the step's dynamic energy split:
its main loop alone, the rule and on-chip tile work (the OOB twin, no tile bytes in L2 or HBM, less
the main loop), the tile bytes (the step less its OOB twin), against the dynamic energy that 60% of
the cell's floor allows at the cap.
"""

from __future__ import annotations

import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "call2/grid_call/grid/kernel.csv")
CLOCK = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "call8/clock_probe.csv")
CAP_W = 690.0  # the board's cap as the windows read it (every GEMM window: 686-692 W)

windows = list(csv.DictReader(open(CLOCK)))
idle_w = statistics.median(float(w["power_w_median"]) for w in windows if w["arm"] == "sleep")
per_byte = []  # dynamic µJ per MB of the copy arm, per cell
for w in windows:
    if w["arm"] == "copy":
        M, N = map(int, w["shape"].split("x"))
        megabytes = 2 * 3 * M * N * 2 / 1e6  # AdamW bf16: weight + two moments, read and written
        per_byte.append((float(w["power_w_median"]) - idle_w) * 1e3 * float(w["ms_per_step"]) / megabytes)
uj_per_mb = statistics.median(per_byte)
rate_tbps = (CAP_W - idle_w) / uj_per_mb  # W / (µJ/MB) = MB/µs = TB/s
print(f"idle {idle_w:.0f} W; copy {uj_per_mb:.1f} µJ/MB dynamic ({min(per_byte):.1f}-{max(per_byte):.1f}); "
      f"under the {CAP_W:.0f} W cap the bytes cost as if moved at {rate_tbps:.2f} TB/s on top of the GEMM\n")
print("| shape | BT | arm | step µs | cuBLAS µs | floor µs | % of floor | power bound µs | % of floor at the bound |")
print("|---|---|---|---|---|---|---|---|---|")
for r in csv.DictReader(open(GRID)):
    bt = int(r["bt"])
    if bt > 1024:
        continue
    M, N = map(int, r["shape"].split("x"))
    epilogue_mb = (int(r["bytes_moved"]) - 2 * bt * (M + N)) / 1e6
    cublas_us, floor_us, step_us = (1e3 * float(r[k]) for k in ("cublas_ms", "floor_ms", "forge_ms"))
    bound_us = cublas_us + epilogue_mb / rate_tbps
    mark = " (cycles, not power: below the cap)" if r["shape"] == "1024x4096" else ""
    print(f"| {r['shape']} | {bt} | {r['arm']} | {step_us:.1f} | {cublas_us:.1f} | {floor_us:.1f} | "
          f"{float(r['pct_floor']):.1f}% | {bound_us:.1f} | {100 * floor_us / bound_us:.0f}%{mark} |")

print("\n| cell (call 8, AdamW bf16) | step µJ | main loop alone | rule + on-chip tile work | tile bytes | "
      "cuBLAS wgrad | a copy of the bytes | 60% of floor allows |")
print("|---|---|---|---|---|---|---|---|")
floors = {(r["shape"], int(r["bt"])): 1e3 * float(r["floor_ms"]) for r in csv.DictReader(open(GRID))
          if r["arm"] == "adamw-bf16"}
cells = sorted({(w["shape"], int(w["bt"])) for w in windows if w["arm"] == "copy"})


def energy(shape: str, bt: int, arm: str) -> float:
    """Median over the arm's windows of (W - idle) x µs: µJ per step."""
    rows = [w for w in windows if (w["shape"], int(w["bt"]), w["arm"]) == (shape, bt, arm)]
    return statistics.median((float(w["power_w_median"]) - idle_w) * 1e3 * float(w["ms_per_step"]) for w in rows)


for shape, bt in cells:
    step, oob, loop = (energy(shape, bt, arm) for arm in ("adamw-bf16", "oob:adamw-bf16", "mainloop:adamw-bf16"))
    allowed = (CAP_W - idle_w) * floors[(shape, bt)] / 0.6
    print(f"| {shape} BT {bt} | {step:.0f} | {loop:.0f} ({100 * loop / step:.0f}%) | {oob - loop:.0f} "
          f"({100 * (oob - loop) / step:.0f}%) | {step - oob:.0f} ({100 * (step - oob) / step:.0f}%) | "
          f"{energy(shape, bt, 'cublas'):.0f} | {energy(shape, bt, 'copy'):.0f} | {allowed:.0f} |")
