"""Session 32's numbers from its CSVs:  python results/2026-12-04/session32/compare.py
1. call 1: the int8 codes rounded by one fma (new: signed and nonnegative; rne: signed only) against the
   package before (base), alternating runs new/base/rne/new2; AdamW int8 and its bf16 twin timed rep by rep.
2. calls 3 and 4: the grid's cells that miss issue #3's targets (acceptance counts: python -m
   forge_mcore.bench.kernel --acceptance results/2026-12-04/session32/call3/grid/kernel.csv).
3. call 6: AdamW's step size folded into its denominator (new) against the package before it (base)."""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def read(path: str) -> dict:
    return {(r["shape"], int(r["bt"]), r["arm"]): r for r in csv.DictReader(open(os.path.join(HERE, path)))}


def ab(title: str, call: str, runs: list[str]) -> None:
    """FORGE µs per run and cell; for int8 cells also bf16 twin ÷ int8 (the int8 <= bf16 target, >= 0.97)."""
    print(title)
    data = {run: read(f"{call}/{run}/kernel.csv") for run in runs}
    for cell in sorted(data[runs[0]]):
        times = "  ".join(f"{run} {float(data[run][cell]['forge_ms']) * 1e3:8.1f}" for run in runs)
        ratios = ""
        if cell[2] == "adamw-int8":
            ratios = "   bf16/int8 " + " ".join(
                f"{float(data[run][cell]['bf16_ms']) / float(data[run][cell]['forge_ms']):.3f}" for run in runs)
        print(f"  {cell[0]:>12} BT {cell[1]:>5} {cell[2]:>10}  {times}{ratios}")


def misses(title: str, path: str) -> None:
    print(title)
    for (shape, bt, arm), r in sorted(read(path).items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        if bt <= 1024 and arm != "adamw-int8" and float(r["pct_floor"]) < 60:
            print(f"  {shape:>12} BT {bt:>5} {arm:>10}  {float(r['pct_floor']):.1f}% of floor")
        if arm == "adamw-int8" and float(r["bf16_ms"]) / float(r["forge_ms"]) < 0.97:
            print(f"  {shape:>12} BT {bt:>5} {arm:>10}  bf16/int8 {float(r['bf16_ms']) / float(r['forge_ms']):.3f}")


ab("call 1: int8 codes by one fma (µs)", "call1", ["new", "base", "rne", "new2"])
misses("\ncall 3: the grid's misses (23/30, 40/40, 40/40, int8 18/20)", "call3/grid/kernel.csv")
misses("\ncall 4: the grid's misses (22/30, 40/40, 40/40, int8 18/20)", "call4/grid/kernel.csv")
ab("\ncall 6: AdamW's step size in its denominator (µs)", "call6", ["new", "base", "new2"])
