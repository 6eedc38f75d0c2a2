"""Session 29's numbers from its CSVs:  python results/2026-12-03/session29/compare.py
1. calls 1, 2 (and 4 when fetched): each A/B's new and new2 runs against base (scripts/device/code_ab.sh), per cell.
2. session 28 call 3's grid -> calls 3 and 5's grids: % of floor (BT <= 1024) and int8 / bf16 twin per cell."""
import csv
import os
import statistics

S28, S29 = "results/2026-12-03/session28/", "results/2026-12-03/session29/"


def rows(path: str) -> dict:
    return {(r["shape"], int(r["bt"]), r["arm"]): r for r in csv.DictReader(open(path))}


for call in ("call1", "call2", "call4/lm"):
    runs = {run: rows(f"{S29}{call}/{run}/kernel.csv") for run in ("new", "base", "new2")
            if os.path.exists(f"{S29}{call}/{run}/kernel.csv")}
    if len(runs) < 3:
        continue
    speedups = []
    print(f"{call}: base / new, base / new2 (> 1: this tree faster)")
    for cell in sorted(runs["base"]):
        base = float(runs["base"][cell]["forge_ms"])
        pair = [base / float(runs[run][cell]["forge_ms"]) for run in ("new", "new2") if cell in runs[run]]
        speedups += pair
        name = f"{cell[0]:>12} {cell[1]:>6} {cell[2]:>11}"
        print(f"  {name}  base {base * 1e3:8.1f} us  " + " ".join(f"{x:.3f}" for x in pair))
    print(f"  median {statistics.median(speedups):.3f}, range {min(speedups):.3f}-{max(speedups):.3f}")

before = rows(S28 + "call3/grid/kernel.csv")
after, again = rows(S29 + "call3/grid/kernel.csv"), rows(S29 + "call5/grid/kernel.csv")
print("grid, session 28 call 3 -> session 29 call 3 (call 5)")


def twin(row: dict) -> float:
    return float(row["bf16_ms"]) / float(row["forge_ms"])


for cell, r in after.items():
    old, r5, name = before[cell], again[cell], f"{cell[0]:>12} {cell[1]:>6} {cell[2]:>11}"
    if cell[1] <= 1024 and "int8" not in cell[2]:
        pct = [float(x["pct_floor"]) for x in (old, r, r5)]
        print(f"  {name}  {pct[0]:5.1f} -> {pct[1]:5.1f} ({pct[2]:5.1f})% of floor")
    if r["bf16_ms"]:
        print(f"  {name}  int8 / bf16 twin {twin(old):.3f} -> {twin(r):.3f} ({twin(r5):.3f})")
