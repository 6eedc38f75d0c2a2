"""The main loop alone (each cell's winner with its epilogue compiled out) on the H100 (call 2) against the
H200 (session 35's grid, the same configs), by kernel, BT range and shape class: the ratio H100 ÷ H200 of
the main-loop-only time, its range over the cells, and the cell at the top of the range.

    python results/2026-12-05/session37/mainloop_by_card.py
"""

import ast
import collections
import csv

H200 = "results/2026-12-05/session35/call3/grid/kernel.csv"
H100 = "results/2026-12-05/session37/call2/grid/kernel.csv"


def cells(path: str) -> dict:
    return {(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(path))}


h200, h100 = cells(H200), cells(H100)
groups = collections.defaultdict(list)
for key, row in h200.items():
    kernel = ast.literal_eval(row["config"])["kernel"]
    assert kernel == ast.literal_eval(h100[key]["config"])["kernel"], key  # the borrowed winner
    group = (kernel, "BT <= 1024" if int(key[1]) <= 1024 else "BT >= 4096",
             "1024x4096" if key[0] == "1024x4096" else "larger shapes")
    groups[group].append((float(h100[key]["mainloop_ms"]) / float(row["mainloop_ms"]), key))
print("| kernel | BT | shapes | cells | H100 ÷ H200, main loop alone | slowest cell |")
print("|---|---|---|---|---|---|")
for group in sorted(groups):
    ratios = sorted(groups[group])
    span = f"{ratios[0][0]:.2f}–{ratios[-1][0]:.2f}"
    print(f"| {' | '.join(group)} | {len(ratios)} | {span} | {' '.join(ratios[-1][1])} |")
