"""Session 26 call 4: per cell, the committed winner's time (the sweep run's FORGE arm) against the
fastest tile-ring config among the sweep's rows (rebuilt from its log), in µs, and their ratio:

    python results/2026-12-03/session26/ring_vs_winners.py
"""

import ast
import csv
import os

folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "call4", "sweep")
winner = {(r["shape"], r["bt"], r["arm"]): float(r["forge_ms"]) for r in csv.DictReader(open(f"{folder}/kernel.csv"))}
ring: dict[tuple, float] = {}
for r in csv.DictReader(open(f"{folder}/sweep.csv")):
    if ast.literal_eval(r["config"])["tile_ring"]:
        cell = (r["shape"], r["bt"], r["arm"])
        ring[cell] = min(ring.get(cell, float("inf")), float(r["forge_ms"]))
for cell in sorted(winner):
    old, new = winner[cell], ring[cell]
    print(*cell, f"winner {old * 1e3:.1f}", f"ring {new * 1e3:.1f}", f"x{old / new:.3f}")
