"""Session 47: how much the grid's cells move between cards when their config does not: for each pair of grids,
the ratio of the step's, cuBLAS's and the main loop's times over the cells whose config is the same in both.

    python3 results/2026-12-06/session47/card_spread.py results/2026-12-06/session47/call{4,9,12}/grid/kernel.csv
"""

import csv
import itertools
import statistics
import sys


def main() -> None:
    grids = {path: {(r["shape"], r["bt"], r["arm"]): r for r in csv.DictReader(open(path))} for path in sys.argv[1:]}
    for (a, ga), (b, gb) in itertools.combinations(grids.items(), 2):
        shared = [k for k in gb if k in ga and ga[k]["config"] == gb[k]["config"]]
        print(f"{b} / {a}: {len(shared)} cells on the same config")
        for column in ("forge_ms", "cublas_ms", "mainloop_ms"):
            ratios = sorted(float(gb[k][column]) / float(ga[k][column]) for k in shared)
            print(f"  {column}: median {statistics.median(ratios):.3f}, 10th-90th percentile "
                  f"{ratios[len(ratios) // 10]:.3f}-{ratios[9 * len(ratios) // 10]:.3f}, "
                  f"all {ratios[0]:.3f}-{ratios[-1]:.3f}")


if __name__ == "__main__":
    main()
