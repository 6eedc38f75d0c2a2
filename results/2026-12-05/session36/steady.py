"""Call 2's steady state per call (``graph_length.py``'s fit over graphs of 1-24 calls) as % of each cell's
floor (the floor of session 35's grid, ``results/2026-12-05/session35/call3/grid/kernel.csv``), beside the
grid's own reading of the cell.

    python results/2026-12-05/session36/steady.py
"""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = os.path.join(HERE, "..", "..", "2026-12-05", "session35", "call3", "grid", "kernel.csv")
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "device"))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from graph_length import fit  # noqa: E402  (the fit call 2 printed)

grid = {(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(GRID))}
rows = list(csv.DictReader(open(os.path.join(HERE, "call2", "graph_length.csv"))))
for cell in dict.fromkeys(r["cell"] for r in rows):
    shape, bt, arm = cell.split(":")
    g = grid[(shape, bt, arm)]
    floor_us = 1000 * float(g["floor_ms"])
    step = [r for r in rows if r["cell"] == cell and r["arm"] == "step"]
    lengths = [int(r["calls"]) for r in step]
    _, steady = fit(lengths, [float(r["us_per_call"]) * n for r, n in zip(step, lengths)])
    longest = max(step, key=lambda r: int(r["calls"]))
    print(f"{cell}: steady {steady:.2f} us = {100 * floor_us / steady:.1f}% of floor; graph of "
          f"{longest['calls']} calls {float(longest['us_per_call']):.2f} us = "
          f"{100 * floor_us / float(longest['us_per_call']):.1f}%; session 35's grid {g['pct_floor'][:4]}%")
