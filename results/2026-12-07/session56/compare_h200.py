"""Session 56: the two H200 grids (calls 2-3) against sessions 40 and 44's, cell by cell, and each grid's misses.

    python results/2026-12-07/session56/compare_h200.py

Prints, per grid, every cell that misses a target with its value (a cell short of 60% of floor with the speedup
it needs), then per earlier grid the step-time ratio, the earlier grid's time ÷ the faster of this session's two
(above 1 this session is faster). Configs are compared with the fields added since session 40 dropped where they
hold their defaults, so "same config" means the same row.
"""

import ast
import csv
import statistics
from pathlib import Path

from forge_mcore.bench.kernel import FLOOR_TARGET_PCT, MAINLOOP_TARGET_PCT, NO_SLOWER

HERE = Path(__file__).parent
EARLIER = {
    "session 40": "results/2026-12-05/session40/call2/grid/kernel.csv",
    "session 44": "results/2026-12-06/session44/call2/grid/kernel.csv",
}
NEW_FIELD_DEFAULTS = {"first_fill_after": 0, "serial_fills": False, "wave_sync": 0}


def load(path: str | Path) -> dict[tuple[str, str, str], dict[str, str]]:
    return {(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(path))}


def config(row: dict[str, str]) -> dict:
    fields = ast.literal_eval(row["config"])
    return {k: v for k, v in fields.items() if not (k in NEW_FIELD_DEFAULTS and v == NEW_FIELD_DEFAULTS[k])}


def misses(grid: dict[tuple[str, str, str], dict[str, str]]) -> list[str]:
    found = []
    for (shape, bt, arm), row in grid.items():
        if int(bt) <= 1024 and arm != "adamw-int8" and float(row["pct_floor"]) < FLOOR_TARGET_PCT:
            needs = FLOOR_TARGET_PCT / float(row["pct_floor"])
            allowed_us, cublas_us, main_loop_us = (1e3 * float(row[k]) / d for k, d in (
                ("floor_ms", FLOOR_TARGET_PCT / 100), ("cublas_ms", 1), ("mainloop_ms", 1)))
            found.append(f"{shape} BT {bt} {arm}: {float(row['pct_floor']):.2f}% of floor (needs {needs:.3f}x: "
                         f"{FLOOR_TARGET_PCT:.0f}% allows {allowed_us:.1f} us, cuBLAS's wgrad alone {cublas_us:.1f}, "
                         f"the main loop alone {main_loop_us:.1f})")
        if int(bt) >= 4096 and float(row["speedup"]) < NO_SLOWER:
            found.append(f"{shape} BT {bt} {arm}: {float(row['speedup']):.3f}x the baseline")
        if int(bt) >= 4096 and float(row["mainloop_eff"]) < MAINLOOP_TARGET_PCT:
            found.append(f"{shape} BT {bt} {arm}: main loop {float(row['mainloop_eff']):.1f}%")
        if arm == "adamw-int8" and float(row["bf16_ms"]) / float(row["forge_ms"]) < NO_SLOWER:
            found.append(f"{shape} BT {bt} int8: {float(row['bf16_ms']) / float(row['forge_ms']):.3f} of bf16")
    return found


def main() -> None:
    grids = {f"call {k}": load(HERE / f"call{k}/grid/kernel.csv") for k in (2, 3)}
    for name, grid in grids.items():
        print(f"{name} misses:")
        for line in misses(grid):
            print("  " + line)
    for name, path in EARLIER.items():
        earlier = load(path)
        ratios, changed = [], []
        for key, row in grids["call 2"].items():
            fastest = min(float(g[key]["forge_ms"]) for g in grids.values())
            ratios.append((float(earlier[key]["forge_ms"]) / fastest, key))
            if config(earlier[key]) != config(row):
                changed.append(key)
        values = [r for r, _ in ratios]
        low, high = min(ratios), max(ratios)
        print(f"{name}'s step ÷ session 56's faster: median {statistics.median(values):.3f}, "
              f"{low[0]:.3f} ({' '.join(low[1])}) to {high[0]:.3f} ({' '.join(high[1])}); "
              f"configs that differ: {len(changed)} of {len(ratios)}")


if __name__ == "__main__":
    main()
