"""The [nn] peer table under a time budget: ``forge_mcore.bench.e2e``'s arms, one process each.

Used by ``scripts/device/peers.sh`` (one of these per GPU). The same method and
code as ``python -m forge_mcore.bench.e2e --table peer`` (its ``run_table`` runs
each arm in a fresh process), with three differences for a device call of at
most 600 s: each arm's process timeout is ``min(its cap, the time left)``, an
arm that no longer fits is recorded as skipped, and ``e2e_peer.csv`` is
rewritten after every arm, so a call stopped at its limit still returns what
finished. Ratios are drawn against this process's own ``fused`` arm (run first).

    python scripts/device/peers.py --arms fused,forge-bf16,bnb8bit --budget 500 --out $OUT/peer_gpu0
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from forge_mcore.bench import e2e  # noqa: E402

# Arms known to need longer than the default cap on Qwen3-8B: torchao compiles its
# step per parameter shape (torch.compile), GaLore takes an SVD of every decoder
# matrix on its first step.
CAPS = {"torchao8bit": 300.0, "galore": 500.0}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arms", required=True, help="comma-separated e2e arms (fused is run first in any case)")
    p.add_argument("--budget", type=float, required=True, help="seconds from now for all the arms")
    p.add_argument("--cap", type=float, default=180.0, help="seconds one arm may take (CAPS overrides some)")
    p.add_argument("--min-start", type=float, default=45.0, help="an arm with less time left than this is skipped")
    p.add_argument("--table", choices=("peer", "scale"), default="peer", help="the table the rows belong to")
    p.add_argument("--model", default="qwen3-8b")
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true", help="e2e --smoke (CPU, tiny model)")
    args = p.parse_args(argv)
    deadline = time.monotonic() + args.budget

    cells = [] if args.smoke else ["--cells", f"{args.model}:{args.seq}"]  # --smoke picks its own tiny cell
    e2e_argv = ["--table", args.table, *cells, "--model", args.model, "--seq", str(args.seq), "--arms", args.arms,
                "--out", args.out] + (["--smoke"] if args.smoke else [])
    bench = e2e.parse_args(e2e_argv)
    rows: list[e2e.Row] = []
    for arm in bench.arm_list:
        left = deadline - time.monotonic()
        if left < args.min_start:
            rows.append(e2e.Row(args.table, bench.cell_list[0][0], bench.cell_list[0][1], bench.batch, arm,
                                status=f"skipped: {left:.0f} s of the budget left",
                                description=e2e.ARMS[arm][1]))
        else:
            bench.timeout = min(CAPS.get(arm, args.cap), left - 5)
            started = time.monotonic()
            rows += e2e.run_table(args.table, bench.cell_list, [arm], bench)
            print(f"[peers] {arm}: {rows[-1].status} in {time.monotonic() - started:.0f} s", flush=True)
        fused = next((r for r in rows if r.arm == "fused" and r.status == "ok"), None)
        for row in rows:
            if fused is not None and row.status == "ok":
                row.time_vs_fused = row.step_ms / fused.step_ms
                row.peak_vs_fused = row.peak_gb / fused.peak_gb if fused.peak_gb and math.isfinite(fused.peak_gb) \
                    else math.nan
        e2e.write_outputs(rows, args.out, args.table)
    print(e2e.format_table(rows), flush=True)
    return 0 if all(r.status == "ok" or r.status.startswith(("not installed", "skipped")) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
