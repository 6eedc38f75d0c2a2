"""Cycles per step from clock_probe.py's CSVs: each arm's windows averaged (ms per step, median SM clock, board
power), then ms x MHz. Session 48, calls 5 and 8.

    python3 results/2026-12-06/session48/cycles.py results/2026-12-06/session48/call{5,8}/clock_probe.csv
"""

from __future__ import annotations

import csv
import statistics
import sys


def main(paths: list[str]) -> None:
    for path in paths:
        print(path)
        arms: dict[str, list[dict[str, str]]] = {}
        for row in csv.DictReader(open(path)):
            arms.setdefault(row["arm"], []).append(row)
        for arm, rows in arms.items():
            ms, mhz, watts = (statistics.mean(float(r[k]) for r in rows)
                              for k in ("ms_per_step", "sm_mhz_median", "power_w_median"))
            print(f"  {arm:28s} {ms:7.2f} ms {mhz:7.1f} MHz {watts:6.1f} W {ms * mhz / 1000:6.2f} Mcycles")


if __name__ == "__main__":
    main(sys.argv[1:])
