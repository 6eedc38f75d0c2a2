"""Session 30's numbers from its CSVs:  python results/2026-12-04/session30/compare.py
1. call 1: the loop-carried int8 half (new, new2) against the package before it (base), per cell, with each
   run's int8 / bf16-twin ratio (scripts/device/code_ab.sh).
2. session 29 call 5's grid -> calls 3, 4 and 6's grids: % of floor where BT <= 1024 misses 60%, and the int8
   cells whose bf16 twin (timed beside them) is faster by more than 3%.
3. call 6's sweep: each int8 fast-division twin against the same config without it."""
import ast
import csv
import os
import statistics

S29, S30 = "results/2026-12-03/session29/", "results/2026-12-04/session30/"


def rows(path: str) -> dict:
    return {(r["shape"], int(r["bt"]), r["arm"]): r for r in csv.DictReader(open(path))}


runs = {run: rows(f"{S30}call1/ab/{run}/kernel.csv") for run in ("new", "base", "new2")}
speedups = []
print("call 1: base / new, base / new2 (> 1: the loop-carried half faster); int8 / bf16 twin per run")
for cell in sorted(runs["base"]):
    base = float(runs["base"][cell]["forge_ms"])
    pair = [base / float(runs[run][cell]["forge_ms"]) for run in ("new", "new2")]
    speedups += pair
    twins = " ".join(f"{float(runs[r][cell]['bf16_ms']) / float(runs[r][cell]['forge_ms']):.3f}" for r in runs)
    print(f"  {cell[0]:>12} {cell[1]:>6}  base {base * 1e3:7.1f} us  " + " ".join(f"{x:.3f}" for x in pair)
          + f"  twin (new base new2) {twins}")
print(f"  median {statistics.median(speedups):.3f}, range {min(speedups):.3f}-{max(speedups):.3f}")

grids = {"s29 call 5": S29 + "call5/grid/kernel.csv", "s30 call 3": S30 + "call3/grid/kernel.csv",
         "s30 call 4": S30 + "call4/grid/kernel.csv", "s30 call 6": S30 + "call6/grid/kernel.csv"}
grids = {name: rows(path) for name, path in grids.items() if os.path.exists(path)}
print("\n% of floor (BT <= 1024; cells under 60% in any grid)  |  int8 / bf16 twin (cells under 0.97 in any)")
print(" " * 34 + "  ".join(f"{name:>10}" for name in grids))
first = next(iter(grids.values()))
for cell in sorted(first, key=lambda c: (c[2], c[1], c[0])):
    if cell[2] == "adamw-int8":
        values = [float(g[cell]["bf16_ms"]) / float(g[cell]["forge_ms"]) for g in grids.values()]
        if min(values) < 0.97:
            print(f"  int8 {cell[0]:>12} {cell[1]:>6}" + " " * 10 + "  ".join(f"{v:10.3f}" for v in values))
    elif cell[1] <= 1024:
        values = [float(g[cell]["pct_floor"]) for g in grids.values()]
        if min(values) < 60:
            print(f"  {cell[2]:>10} {cell[0]:>12} {cell[1]:>5}" + " " * 5 + "  ".join(f"{v:10.1f}" for v in values))

# 3. call 6's sweep: each fast-division twin against the same config without it, per kernel
times: dict = {}
for r in csv.DictReader(open(S30 + "call6/sweep/sweep.csv")):
    cfg = ast.literal_eval(r["config"])
    times[(r["shape"], r["bt"], str({k: v for k, v in cfg.items() if k != "fast_division"}), cfg["fast_division"])] = \
        float(r["forge_ms"])
pairs: dict = {}
for (shape, bt, cfg, fast), ms in times.items():
    if fast and (shape, bt, cfg, False) in times:
        pairs.setdefault(ast.literal_eval(cfg)["kernel"], []).append(times[(shape, bt, cfg, False)] / ms)
print("\ncall 6: time without / with the fast divisions, AdamW int8, BT 4096/16384 (> 1: faster with them)")
for kernel, ratios in pairs.items():
    print(f"  {kernel:>16}: {len(ratios)} pairs, median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}")
