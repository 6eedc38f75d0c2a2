"""Session 22 call 6 (with call4/oob_tiles.patch applied): forge_mcore.bench.timeline's per-consumer phase
summary of the committed winner, as it is (mode "step") and with its weight's descriptors clipped to one
tile (mode "oob": no tile bytes in L2 or HBM), so the phases that grow with the bytes show.
    python3 timeline_oob.py OUT_DIR CELL[,CELL...]      (CELL = MxN:BT:arm)  -> OUT_DIR/timeline_oob.csv
"""

from __future__ import annotations

import csv
import os
import sys

from forge_mcore.bench import kernel as bench_kernel
from forge_mcore.bench import timeline
from forge_mcore.kernels import gluon_wgrad

out, cells = sys.argv[1], sys.argv[2].split(",")
plain = bench_kernel.cell_operands


def clipped(shape, bt, device="cuda"):
    dy, x, w = plain(shape, bt, device)
    gluon_wgrad.DIAG_OOB_WEIGHTS.add(w.data_ptr())
    return dy, x, w


rows = []
for cell in cells:
    shape, bt, arm = cell.split(":")
    for mode in ("step", "oob"):
        bench_kernel.cell_operands = clipped if mode == "oob" else plain
        for r in timeline.run_cell(shape, int(bt), arm, reps=20):
            r.pop("trace", None)
            rows.append(dict(mode=mode, **r))
            keys = [k for k in r if k.endswith("/ span") or "cycles" in k or k.endswith("_ms")]
            print(cell, mode, " ".join(f"{k}={r[k]:.3g}" for k in keys), flush=True)
        gluon_wgrad.DIAG_OOB_WEIGHTS.clear()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "timeline_oob.csv"), "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=sorted({k for r in rows for k in r}))
    writer.writeheader()
    writer.writerows(rows)
