"""Session 47: the Lion baseline's time per cell across grids (torch.compile'd, it varied between calls), and the
last grid's Lion speedups against the fastest baseline any of them saw.

    python3 results/2026-12-06/session47/lion_baseline.py \
        results/2026-12-06/session4{5/call5,6/call4,6/call10,7/call4,7/call9,7/call12}/grid/kernel.csv
"""

import csv
import sys


def main() -> None:
    grids = [{(r["shape"], r["bt"]): r for r in csv.DictReader(open(path)) if r["arm"] == "lion-bf16"}
             for path in sys.argv[1:]]
    last = grids[-1]
    worst = 1.0
    for cell, row in last.items():
        times = [float(g[cell]["baseline_ms"]) for g in grids if cell in g]
        against_fastest = min(times) / float(row["forge_ms"])
        worst = max(worst, max(times) / min(times))
        print(f"{cell[0]:>12} BT {cell[1]:>5}: baseline {min(times):.4f}-{max(times):.4f} ms over {len(times)} grids; "
              f"last grid's speedup {float(row['speedup']):.3f}, against the fastest baseline {against_fastest:.3f}")
    print(f"largest max/min of a cell's baseline: {worst:.2f}")


if __name__ == "__main__":
    main()
