"""Call 2's steady state per call (``graph_length.py``'s fit over graphs of 1-24 calls) as % of each cell's
floor (the floor of session 35's grid, ``results/2026-12-05/session35/call3/grid/kernel.csv``), beside the
grid's own reading of the cell.

    python results/2026-12-05/session36/steady.py
"""

import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = os.path.join(HERE, "..", "..", "2026-12-05", "session35", "call3", "grid", "kernel.csv")


def fit(lengths: list[int], per_graph: list[float]) -> tuple[float, float]:
    """Least-squares intercept (per graph) and slope (per call), as ``graph_length.fit``."""
    mean_l, mean_t = sum(lengths) / len(lengths), sum(per_graph) / len(per_graph)
    slope = sum((n - mean_l) * (t - mean_t) for n, t in zip(lengths, per_graph)) / sum(
        (n - mean_l) ** 2 for n in lengths)
    return mean_t - slope * mean_l, slope


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
