"""Session 28's numbers from its CSVs:  python results/2026-12-03/session28/compare.py
1. call 1: the L2-prefetching tile rings (the sweep's candidates) against the committed winner of
   each cell (its grid row, timed in the same cell): winner ms / best candidate ms.
2. session 27 call 6's grid -> call 3's grid: the BT <= 1024 cells whose winner changed (call 2's
   sweep), and the spread of those whose config did not."""
import ast
import csv
import statistics

S27, S28 = "results/2026-12-03/session27/", "results/2026-12-03/session28/"


def rows(path: str) -> dict:
    return {(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(path))}


grid1 = rows(S28 + "call1/sweep/kernel.csv")
best: dict = {}
for r in csv.DictReader(open(S28 + "call1/sweep/sweep.csv")):
    cell = (r["shape"], r["bt"], r["arm"])
    best[cell] = min(best.get(cell, float("inf")), float(r["forge_ms"]))
ratios = {cell: float(grid1[cell]["forge_ms"]) / ms for cell, ms in best.items()}
print(f"prefetching rings, winner / best candidate over {len(ratios)} cells: "
      f"{min(ratios.values()):.2f}-{max(ratios.values()):.2f}x")

before, after = rows(S27 + "call6/grid/kernel.csv"), rows(S28 + "call3/grid/kernel.csv")
same = []
for cell, r in after.items():
    if int(cell[1]) > 1024:
        continue
    old, new = before[cell], r
    if ast.literal_eval(old["config"]) != ast.literal_eval(new["config"]):
        print(f"{cell}: new winner, {float(old['forge_ms']) * 1e3:.1f} -> {float(new['forge_ms']) * 1e3:.1f} us "
              f"({float(old['pct_floor']):.1f} -> {float(new['pct_floor']):.1f}% of floor)")
    else:
        same.append(abs(float(new["forge_ms"]) / float(old["forge_ms"]) - 1) * 100)
print(f"{len(same)} unchanged BT <= 1024 cells: |change| median {statistics.median(same):.1f}%, max {max(same):.1f}%")
