"""Where a Gluon step's time goes, per consumer warpgroup: the phase timeline of each SM.

    python3 -m forge_mcore.bench.timeline --out $OUT/timeline          # device machine
    python3 -m forge_mcore.bench.timeline --out DIR --shapes 4096x4096 --bts 512,1024 --arms adamw-bf16

Per cell (weight shape x BT x arm, the committed tile config, which must be a Gluon one), the
step runs once with ``TRACE_TILES`` > 0: each consumer writes the SM's clock at the phase
boundaries of its units (``gluon_wgrad.TRACE_PHASE_NAMES``). ``summarize`` turns that into the
time each consumer spends waiting for its turn, in its main loop, waiting for its tile's weight
and state, running the rule and issuing stores, and draining them, and into how much of an SM's
span one consumer's main loop overlaps the other's epilogue: the overlap that the ping-pong
schedule exists for. The untraced and traced step times (graph-timed) say what the stamps cost.

Writes under ``--out``: ``timeline.json`` (per cell: the summary and the times), ``timeline.csv``
(one row per cell), ``traces.pt`` (every row with its raw trace) and ``timeline.png`` (the first
cell's timelines on four SMs; ``--plots N``: the first N rows'). ``--candidates`` adds a row per
Gluon config of ``configs.CANDIDATES`` to each cell.
"""

from __future__ import annotations

import argparse
import csv
import json
import os

import torch

from forge_mcore.kernels.configs import TileConfig
from forge_mcore.kernels.gluon_wgrad import TRACE_PHASE_NAMES

# the phases' indices in a trace, in the kernel's order (the unpacking fails if it changes)
TURN, MAIN_LOOP, MAIN_LOOP_DONE, TILE_READY, STORES_ISSUED, RELEASED = range(len(TRACE_PHASE_NAMES))


def _intervals_overlap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Total overlap between two sets of [start, end) intervals ([n, 2] and [m, 2]), per pair summed."""
    start = torch.maximum(a[:, None, 0], b[None, :, 0])
    end = torch.minimum(a[:, None, 1], b[None, :, 1])
    return (end - start).clamp(min=0).sum()


def summarize(trace: torch.Tensor) -> dict:
    """Per-phase cycles from a trace [programs, consumers, units, phases] (int64 clocks; a unit a
    consumer did not run is all zeros). Medians over programs of: ``span`` (first stamp to last),
    each consumer's summed phase durations, and ``overlap`` (the cycles in which one consumer's main
    loop runs while another is between its tile-ready and released stamps, summed over the pairs)
    over ``span``."""
    trace = trace.to(torch.int64)
    ran = trace[..., TURN] > 0  # [programs, consumers, units]
    consumers = range(trace.shape[1])
    released = torch.where(trace[..., RELEASED] > 0, trace[..., RELEASED], trace[..., STORES_ISSUED])
    phases = {
        "turn wait": trace[..., MAIN_LOOP] - trace[..., TURN],
        "main loop": trace[..., MAIN_LOOP_DONE] - trace[..., MAIN_LOOP],
        "tile wait": trace[..., TILE_READY] - trace[..., MAIN_LOOP_DONE],
        "rule + stores issued": trace[..., STORES_ISSUED] - trace[..., TILE_READY],
        "stores drained": released - trace[..., STORES_ISSUED],
    }
    per_program = {name: (d * ran).sum(dim=2).float() for name, d in phases.items()}  # [programs, consumers]
    spans, overlaps, programs = [], [], []
    for p in range(trace.shape[0]):
        if not ran[p].any():
            continue
        first, last = trace[p][ran[p]][:, TURN].min(), released[p][ran[p]].max()
        loops = [trace[p, c][ran[p, c]][:, [MAIN_LOOP, MAIN_LOOP_DONE]] for c in consumers]
        epilogues = [torch.stack([trace[p, c][ran[p, c]][:, TILE_READY], released[p, c][ran[p, c]]], dim=1)
                     for c in consumers]
        overlap = sum(_intervals_overlap(loops[a], epilogues[b]) for a in consumers for b in consumers if a != b)
        spans.append(float(last - first))
        overlaps.append(float(overlap))
        programs.append(p)
    median = lambda t: float(t.median()) if t.numel() else 0.0  # noqa: E731
    span = torch.tensor(spans)
    out = {"programs": len(programs), "span cycles": median(span),
           "overlap / span": median(torch.tensor(overlaps) / span) if spans else 0.0}
    for name, cycles in per_program.items():
        kept = cycles[programs]
        for c in consumers:
            out[f"{name} cycles c{c}"] = median(kept[:, c])
        out[f"{name} / span"] = median(kept.mean(dim=1) / span) if spans else 0.0
    return out


def cell_step(shape: str, bt: int, arm: str) -> tuple:
    """A cell's operands after one fused step (which picks its config outside any graph):
    (dy, x, w, state, hyper, telemetry, the committed config)."""
    import forge_mcore as fm
    from forge_mcore import ops
    from forge_mcore.bench.kernel import ARMS, cell_operands

    rule, state_dtype, hp, _ = ARMS[arm]
    dy, x, w = cell_operands(shape, bt)
    state = fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16")
    hyper = state.prepare_step(state.rule.make_group(**hp))
    tel = fm.StepTelemetry.zeros("cuda")
    fm.fused_wgrad_step(dy, x, w, state, hyper, telemetry=tel)
    return dy, x, w, state, hyper, tel, ops.tuned_config(dy, w, state)


def run_cell(shape: str, bt: int, arm: str, reps: int, extra: tuple = ()) -> list[dict]:
    """Untraced and traced step times, and the trace's summary, for one cell: its committed
    config, and each config of ``extra`` (Gluon ``TileConfig``s) that applies."""
    from forge_mcore.bench.common import time_graph
    from forge_mcore.kernels import gluon_wgrad

    M, N = map(int, shape.split("x"))
    dy, x, w, state, hyper, tel, committed = cell_step(shape, bt, arm)
    states = state.slot_tensors
    rows = []
    for cfg in [committed, *(c for c in extra if c != committed)]:
        if cfg is None or not gluon_wgrad.applies(cfg, state, dy, None, True, True):
            if cfg is committed:
                rows.append(dict(shape=shape, bt=bt, arm=arm, config=str(cfg),
                                 skipped="the committed config is not a Gluon one"))
            continue
        trace = gluon_wgrad.trace_buffer(cfg, M, N, w.device)

        def step(traced: bool, cfg: TileConfig = cfg, trace: torch.Tensor = trace) -> None:
            gluon_wgrad.launch(cfg, dy, x, w, state, states, hyper, tel.sumsq, tel.nonfinite_tiles, None, None,
                               trace=trace if traced else None)

        step_ms = time_graph(lambda: step(False), reps=reps)
        traced_ms = time_graph(lambda: step(True), reps=reps)
        trace.zero_()
        step(True)
        torch.cuda.synchronize()
        rows.append(dict(shape=shape, bt=bt, arm=arm, config=str(cfg), kernel=cfg.kernel,
                         committed=cfg is committed, step_ms=step_ms, traced_ms=traced_ms,
                         **summarize(trace.cpu()), trace=trace.cpu()))
    return rows


def plot(cell: dict, path: str, sms: int = 4) -> None:
    """The cell's timelines on its first ``sms`` programs: one row per consumer, a bar per phase."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trace = cell["trace"]
    colors = {(MAIN_LOOP, MAIN_LOOP_DONE): "tab:blue", (MAIN_LOOP_DONE, TILE_READY): "tab:gray",
              (TILE_READY, STORES_ISSUED): "tab:orange", (STORES_ISSUED, RELEASED): "tab:red"}
    consumers = trace.shape[1]
    fig, ax = plt.subplots(figsize=(12, 0.5 + 0.6 * consumers * sms))
    for p in range(min(sms, trace.shape[0])):
        origin = trace[p][trace[p, ..., TURN] > 0][:, TURN].min()  # SM clocks are not aligned across SMs
        for c in range(consumers):
            row = consumers * p + c
            for stamps in trace[p, c]:
                if stamps[TURN] == 0:
                    continue
                for (a, b), color in colors.items():
                    if stamps[b] > 0:
                        ax.barh(row, float(stamps[b] - stamps[a]), left=float(stamps[a] - origin), color=color,
                                height=0.8)
    ax.set_yticks(range(consumers * sms), [f"SM {p} c{c}" for p in range(sms) for c in range(consumers)])
    ax.set_xlabel("SM clock cycles from the SM's first stamp")
    ax.set_title(f"{cell['shape']} BT {cell['bt']} {cell['arm']} ({cell['kernel']}): main loop (blue), tile wait "
                 "(gray), rule + stores issued (orange), stores drained (red)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--shapes", default="4096x4096,12288x4096")
    p.add_argument("--bts", default="512,1024,4096")
    p.add_argument("--arms", default="adamw-bf16,adamw-int8")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--candidates", action="store_true", help="also every Gluon config of configs.CANDIDATES")
    p.add_argument("--kernels", default="", help="also every config of CONFIGS and CANDIDATES of these Gluon "
                   "kernels (comma-separated, e.g. gluon_ws,gluon_tall)")
    p.add_argument("--plots", type=int, default=1, help="plot the first PLOTS traced rows (timeline_<i>.png)")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("the timeline needs a CUDA device (Hopper: the Gluon kernel)")
    os.environ.setdefault("FORGE_AUTOTUNE", "0")  # the committed config, as a training step runs it
    os.makedirs(args.out, exist_ok=True)
    from forge_mcore.kernels.configs import CANDIDATES, CONFIGS

    kernels = set(filter(None, args.kernels.split(",")))
    extra = tuple(dict.fromkeys([c for c in CONFIGS + CANDIDATES if c.kernel in kernels]
                                + list(CANDIDATES if args.candidates else ())))
    cells = []
    for shape in args.shapes.split(","):
        for bt in map(int, args.bts.split(",")):
            for arm in args.arms.split(","):
                for cell in run_cell(shape, bt, arm, args.reps, extra):
                    cells.append(cell)
                    shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in cell.items() if k != "trace"}
                    print(json.dumps(shown), flush=True)
    traced = [c for c in cells if "trace" in c]
    # every trace, for plots of other cells later (``plot`` takes a row with its "trace")
    torch.save(traced, os.path.join(args.out, "traces.pt"))
    try:
        for i, cell in enumerate(traced[:args.plots]):
            plot(cell, os.path.join(args.out, "timeline.png" if i == 0 else f"timeline_{i}.png"))
    except ImportError:
        print("matplotlib missing: no plot")
    rows = [{k: v for k, v in c.items() if k != "trace"} for c in cells]
    with open(os.path.join(args.out, "timeline.json"), "w") as f:
        json.dump(rows, f, indent=1)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(os.path.join(args.out, "timeline.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
