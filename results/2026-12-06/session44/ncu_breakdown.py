"""Print the throughput breakdowns of Nsight Compute reports: every ``*pct_of_peak*`` metric collected,
highest first, one column per report (session 44: which unit of the SM is busiest in the 1024 x 4096 step
against its main loop alone).

    python3 results/2026-12-06/session44/ncu_breakdown.py A.ncu-rep B.ncu-rep ...   (device; needs ncu)
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys


def raw_metrics(report: str) -> dict[str, float]:
    text = subprocess.run(["ncu", "-i", report, "--page", "raw", "--csv"], capture_output=True, text=True,
                          check=True).stdout
    rows = list(csv.reader(io.StringIO(text)))
    names, values = rows[0], rows[2]  # the second row holds the units
    out = {}
    for name, value in zip(names, values):
        try:
            out[name] = float(value.replace(",", ""))
        except ValueError:
            pass
    return out


def main() -> None:
    reports = sys.argv[1:]
    metrics = [raw_metrics(r) for r in reports]
    names = sorted({n for m in metrics for n in m if "pct_of_peak" in n or n == "gpu__time_duration.sum"},
                   key=lambda n: -max(m.get(n, 0.0) for m in metrics))
    print("metric".ljust(92) + "".join(r.rsplit("/", 1)[-1].removesuffix(".ncu-rep")[:24].rjust(26) for r in reports))
    for n in names[:60]:
        print(n[:92].ljust(92) + "".join(f"{m.get(n, float('nan')):26.2f}" for m in metrics))


if __name__ == "__main__":
    main()
