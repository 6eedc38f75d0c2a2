"""Microbenchmark: the fused kernel against cuBLAS wgrad + torch's fused optimizer.

    python -m forge_mcore.bench.kernel --out results/kernel           # full grid
    python -m forge_mcore.bench.kernel --out DIR --shapes 4096x4096 --bts 512 --arms adamw-bf16
    python -m forge_mcore.bench.kernel --report results/kernel/kernel.csv --out docs/   # table + plot
    python -m forge_mcore.bench.kernel --winners results/kernel/kernel.csv   # commit per-shape winners
    python -m forge_mcore.bench.kernel --acceptance A/kernel.csv,B/kernel.csv   # issue #3's targets

Per cell (weight shape x BT x arm), all in one process so ratios are fair:

* ``forge``     the fused step (tuned tile config);
* ``baseline``  ``torch.mm(dY^T, X)`` into a gradient + torch's fused optimizer
                (AdamW / SGD fused=True, capturable; Lion: torch.compile'd, no torch twin);
* ``cublas``    the wgrad GEMM alone;
* ``mainloop``  the FORGE arm's kernel and tile config with its epilogue compiled out;
* ``bf16``      (adamw-int8 cells) the adamw-bf16 FORGE step of the same cell, so the int8 target
                (no slower than bf16 moments) compares two arms timed rep by rep, not two cells.

floor = max(bytes / copy ceiling, FLOPs / cuBLAS bf16 ceiling), bytes = weight
and every state tensor read and written once + dY and X read once; % of floor
= floor / forge time; main-loop efficiency = cublas / mainloop.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch

from forge_mcore.kernels.configs import KERNELS, TileConfig

if TYPE_CHECKING:
    from forge_mcore.bench.common import Ceilings
    from forge_mcore.ops import StepTelemetry
    from forge_mcore.param_state import ForgeParamState

DEFAULT_SHAPES = ["4096x4096", "12288x4096", "4096x12288", "1024x4096", "151936x4096"]
DEFAULT_BTS = [512, 1024, 4096, 16384]
ARMS = {
    # arm: (rule, state_dtype, hyperparameters, torch baseline)
    "adamw-bf16": ("adamw", "bf16", dict(lr=1e-4, weight_decay=0.01), "adamw"),
    "adamw-int8": ("adamw", "int8", dict(lr=1e-4, weight_decay=0.01), "adamw"),
    "sgdm-bf16": ("sgd", "bf16", dict(lr=1e-4, momentum=0.9), "sgdm"),
    "lion-bf16": ("lion", "bf16", dict(lr=1e-5, weight_decay=0.01), "lion"),
}


@dataclass
class Cell:
    shape: str
    bt: int
    arm: str
    forge_ms: float
    baseline_ms: float
    cublas_ms: float
    mainloop_ms: float
    floor_ms: float
    bytes_moved: int
    pct_floor: float
    speedup: float
    mainloop_eff: float
    baseline_kind: str
    config: str
    bf16_ms: float | None = None  # adamw-int8 cells: the adamw-bf16 step interleaved with them


def _lion_step(params, grads, exp_avgs, lr, wd, b1, b2):
    for p, g, m in zip(params, grads, exp_avgs):
        gf = g.float()
        update = (m.float() * b1 + gf * (1 - b1)).sign_()
        p.mul_(1 - lr * wd).add_(update.to(p.dtype), alpha=-lr)
        m.copy_(m.float() * b2 + gf * (1 - b2))


def _baseline(kind: str, params: list[torch.Tensor], hp: dict):
    """torch's own fused step over ``params`` whose .grad is set; returns (step_fn, label)."""
    if kind == "adamw":
        opt = torch.optim.AdamW(params, fused=True, capturable=True, **hp)
        return opt.step, "torch AdamW fused"
    if kind == "sgdm":
        opt = torch.optim.SGD(params, fused=True, **hp)
        return opt.step, "torch SGD fused"
    exp_avgs = [torch.zeros_like(p) for p in params]
    scalars = (hp["lr"], hp.get("weight_decay", 0.0), 0.9, 0.99)
    label = "torch.compile Lion"
    try:
        # each cell's own static-shape compile, the best torch.compile does for its shapes: with one dynamo
        # cache across cells a later cell recompiled with dynamic shapes (automatic dynamic, which PGO carries
        # across runs) and served the cells after it; the baseline read up to 1.7x slower in some device calls
        # than in others (session 47), which would inflate Lion's speedups
        torch._dynamo.reset()
        fn = torch.compile(_lion_step, fullgraph=True, dynamic=False)
        # compiled here, on copies, for the very arguments the timed calls pass (one graph a cell)
        fn([p.detach().clone() for p in params], [p.grad for p in params], [torch.zeros_like(p) for p in params],
           *scalars)
    except Exception as exc:  # no compiler on this machine: eager foreach-free fallback
        print(f"torch.compile unavailable for the Lion baseline ({exc}); using eager", file=sys.stderr)
        fn, label = _lion_step, "eager Lion"
    return (lambda: fn([p.detach() for p in params], [p.grad for p in params], exp_avgs, *scalars)), label


def cell_operands(shape: str, bt: int, device: str = "cuda") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A cell's dY (BT x out), X (BT x in) and starting bf16 weight: the same seeded draw in every tool."""
    M, N = map(int, shape.split("x"))
    gen = torch.Generator(device=device).manual_seed(0)
    dy = torch.randn(bt, M, device=device, dtype=torch.bfloat16, generator=gen)
    x = torch.randn(bt, N, device=device, dtype=torch.bfloat16, generator=gen)
    w0 = (torch.randn(M, N, device=device, generator=gen) * 0.02).to(torch.bfloat16)
    return dy, x, w0


@dataclass
class ForgeArm:
    """The FORGE arm of a cell: its operands and ``len(weights)`` independent weight/state/hyper
    sets, enough that one pass over them streams twice the L2 (``common.rotation_count``)."""
    dy: torch.Tensor
    x: torch.Tensor
    w0: torch.Tensor
    weights: list
    states: list
    hypers: list
    bytes_moved: int  # one step: the weight and every state read and written, dY and X read

    @classmethod
    def build(cls, shape: str, bt: int, arm: str, device: str = "cuda") -> ForgeArm:
        import forge_mcore as fm
        from forge_mcore.bench.common import rotation_count

        rule, state_dtype, hp, _ = ARMS[arm]
        dy, x, w0 = cell_operands(shape, bt, device)
        probe_state = fm.ForgeParamState.create(w0, rule, hp, state_dtype, "bf16")
        bytes_moved = 2 * w0.nbytes + 2 * probe_state.nbytes + dy.nbytes + x.nbytes
        weights = [w0.clone() for _ in range(rotation_count(bytes_moved))]
        states = [fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16") for w in weights]
        hypers = [s.prepare_step(s.rule.make_group(**hp)) for s in states]
        return cls(dy, x, w0, weights, states, hypers, bytes_moved)

    @property
    def tile_bytes(self) -> int:
        """The weight's and its states' bytes, one way (what the epilogue reads, and writes back)."""
        return (self.bytes_moved - self.dy.nbytes - self.x.nbytes) // 2

    def steps(self, telemetry: StepTelemetry, config: TileConfig | None = None) -> list:
        """One step per set, with the tuned config or ``config``."""
        import forge_mcore as fm

        return [lambda w=w, s=s, h=h: fm.fused_wgrad_step(self.dy, self.x, w, s, h, telemetry=telemetry,
                                                          config=config)
                for w, s, h in zip(self.weights, self.states, self.hypers)]


def run_cell(shape: str, bt: int, arm: str, ceilings: Ceilings, *, reps: int = 30, sweep: list | None = None,
             sweep_configs: str = "all", sweep_kernels: tuple[str, ...] = KERNELS, device: str = "cuda") -> Cell:
    """Time one cell. With ``sweep`` (a list), the FORGE arm's tile configs are timed too and
    appended as (config, ms): ``sweep_configs`` "all" (CONFIGS and CANDIDATES) or "candidates",
    of the kernels in ``sweep_kernels``. (``device``: the CPU suite runs a cell with its timing
    stood in for.)"""
    import forge_mcore as fm
    from forge_mcore import ops
    from forge_mcore.bench import common

    M, N = map(int, shape.split("x"))
    _, _, hp, base_kind = ARMS[arm]
    forge = ForgeArm.build(shape, bt, arm, device)
    dy, x, w0, weights, states, sets = forge.dy, forge.x, forge.w0, forge.weights, forge.states, len(forge.weights)
    tel = fm.StepTelemetry.zeros(device)
    fm.fused_wgrad_step(dy, x, weights[0], states[0], forge.hypers[0], telemetry=tel)  # tunes outside the graph
    config = ops.tuned_config(dy, weights[0], states[0])
    if sweep is not None:
        from forge_mcore.kernels.configs import prune_configs

        pool = prune_configs(sweep_pool(sweep_configs, sweep_kernels), M, N, bt, 2,
                             ops._smem_budget(dy.device.index))  # (as the tuner prunes on this device)
        configs = {str(asdict(c)): forge.steps(tel, c) for c in pool if runs_as_labelled(c, states[0], dy)}
        # interleaved like the arms below, so a drift between configs does not pick the winner
        for cfg_text, ms in common.time_graphs(configs, reps=reps).items():
            sweep.append(dict(shape=shape, bt=bt, arm=arm, config=cfg_text, forge_ms=ms))
    # the main loop of the FORGE arm's own kernel and config, its epilogue compiled out
    sink = torch.zeros(1, device=device)
    ops.wgrad_mainloop(dy, x, weights[0], sink=sink, config=config, state=states[0])
    grad = torch.empty(M, N, device=device, dtype=torch.bfloat16)
    baseline_calls, base_label = _baseline_calls(base_kind, w0, dy, x, hp, sets)
    arms = {
        "forge": forge.steps(tel),
        "mainloop": lambda w=weights[0], s=states[0]: ops.wgrad_mainloop(dy, x, w, sink=sink, config=config, state=s),
        "cublas": lambda: torch.mm(dy.t(), x, out=grad),
        "baseline": baseline_calls,
    }
    if arm == "adamw-int8":  # its target is a ratio to the bf16 step: timed beside it, not in another cell
        bf16 = ForgeArm.build(shape, bt, "adamw-bf16", device)
        bf16.steps(tel)[0]()  # (tuned outside the graph)
        arms["bf16"] = bf16.steps(tel)
    # the arms interleaved rep by rep (bench.common.time_graphs): a cell's ratios see one drift
    ms = common.time_graphs(arms, reps=reps)
    forge_ms, mainloop_ms, cublas_ms = ms["forge"], ms["mainloop"], ms["cublas"]
    baseline_ms = ms["baseline"] * len(baseline_calls) / sets  # per set: its wgrad + its share of the step
    bytes_moved = forge.bytes_moved
    floor_ms = max(bytes_moved / (ceilings.copy_gbps * 1e9), 2 * M * N * bt / (ceilings.bf16_tflops * 1e12)) * 1e3
    return Cell(
        shape=shape, bt=bt, arm=arm, forge_ms=forge_ms, baseline_ms=baseline_ms, cublas_ms=cublas_ms,
        mainloop_ms=mainloop_ms, floor_ms=floor_ms, bytes_moved=bytes_moved, pct_floor=100 * floor_ms / forge_ms,
        speedup=baseline_ms / forge_ms, mainloop_eff=100 * cublas_ms / mainloop_ms, baseline_kind=base_label,
        config=str(asdict(config)), bf16_ms=ms.get("bf16"),
    )


def _baseline_calls(kind: str, w0, dy, x, hp: dict, sets: int) -> tuple[list, str]:
    """cuBLAS wgrad into a gradient per buffer set + one torch optimizer step over all sets."""
    params = [torch.nn.Parameter(w0.clone()) for _ in range(sets)]
    grads = [torch.empty_like(w0) for _ in range(sets)]
    for p, g in zip(params, grads):
        p.grad = g
    step_fn, label = _baseline(kind, params, hp)
    calls = [lambda g=g: torch.mm(dy.t(), x, out=g) for g in grads]
    calls.append(step_fn)  # one multi-tensor step over all sets, as a torch optimizer would
    return calls, label


FIELDS = list(Cell.__dataclass_fields__)


def _current_config(text: str):
    """A CSV row's config if it is still in ``CONFIGS``, else None."""
    import ast

    from forge_mcore.kernels.configs import CONFIGS, TileConfig

    fields_ = ast.literal_eval(text)
    # tuning options that no longer exist: rows timed with them off are not winners
    if not (fields_.pop("tma_tiles", True) and fields_.pop("tma_stores", True)):
        return None
    if isinstance(fields_.get("tile_ring"), bool):  # written before session 27: True was three buffers
        fields_["tile_ring"] = 3 if fields_["tile_ring"] else 0
    cfg = TileConfig(**fields_)
    return cfg if cfg in CONFIGS else None


def best_per_cell(path: str) -> dict[tuple[str, str, str], tuple[float, object]]:
    """Per (shape, BT, arm) of a results CSV, the fastest config still in ``CONFIGS`` and its
    time: the graph-timed best of a ``sweep.csv`` beside it where the cell was swept, else the
    config the step chose (the grid's FORGE arm)."""
    folder = os.path.dirname(path)
    best: dict[tuple[str, str, str], tuple[float, object]] = {}
    for r in csv.DictReader(open(path)):
        cfg = _current_config(r["config"])
        if cfg is not None:
            best[(r["shape"], r["bt"], r["arm"])] = (float(r["forge_ms"]), cfg)
    for sweep in (os.path.join(folder, n) for n in os.listdir(folder or ".") if n.startswith("sweep")):
        for r in csv.DictReader(open(sweep)):
            cell, cfg = (r["shape"], r["bt"], r["arm"]), _current_config(r["config"])
            if cfg is not None and (cell not in best or float(r["forge_ms"]) < best[cell][0]):
                best[cell] = (float(r["forge_ms"]), cfg)
    return best


def runs_as_labelled(cfg: TileConfig, state: ForgeParamState, dy: torch.Tensor) -> bool:
    """Whether a step with ``cfg`` runs the kernel the config names: a Gluon config that does not
    apply to this state (shared memory, codec) runs the Triton kernel on its geometry, and a sweep
    row timed under the Gluon name would mislabel that (AdamW bf16 on tall tiles at s5, session 14).
    The benchmark's operands are TMA-aligned."""
    from forge_mcore import ops
    from forge_mcore.kernels import gluon_wgrad

    return cfg.kernel == "triton" or (ops.gluon_enabled() and gluon_wgrad.applies(cfg, state, dy, None, True, True))


def sweep_pool(sweep_configs: str, sweep_kernels: tuple[str, ...]) -> tuple:
    """The configs ``--sweep`` times: CONFIGS and CANDIDATES ("all") or CANDIDATES only, of the
    kernels named; an empty pool is an error naming the options to change."""
    from forge_mcore.kernels.configs import CANDIDATES, CONFIGS

    pool = tuple(c for c in (CANDIDATES if sweep_configs == "candidates" else CONFIGS + CANDIDATES)
                 if c.kernel in sweep_kernels)
    if not pool:
        raise ValueError(f"--sweep has no configs to time: --sweep-configs {sweep_configs} with --sweep-kernels "
                         f"{','.join(sweep_kernels)} selects none (configs.CANDIDATES has {len(CANDIDATES)}); "
                         "use --sweep-configs all or name other kernels")
    return pool


def ceilings_beside(csv_path: str) -> dict:
    """The ``ceilings.json`` a benchmark wrote beside its CSV (ceilings and environment: device,
    architecture), {} where there is none."""
    path = os.path.join(os.path.dirname(csv_path), "ceilings.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def write_winners(csv_paths: list[str]) -> int:
    """Per benchmark cell, the fastest current candidate (``best_per_cell``) as a committed
    winner (``kernels/winners.csv``), keyed as ``ops`` keys its tuning. The device name and
    architecture come from the ``ceilings.json`` beside each CSV (one written before it named the
    architecture: the one the file records for that device); later CSVs override earlier ones; rows
    already in the file for other devices or keys are kept."""
    import forge_mcore as fm
    from forge_mcore import ops
    from forge_mcore.kernels import winners

    merged = {(device, cells): (device, arch, cells, cfg, ms) for device, arch, cells, cfg, ms in winners.read()}
    recorded = {device: arch for device, arch, *_ in merged.values() if arch}
    for path in csv_paths:
        measured_on = ceilings_beside(path)
        device = measured_on["device"]
        arch = measured_on.get("arch") or recorded.get(device)
        if not arch:
            raise ValueError(f"{path}: its ceilings.json names no architecture for {device} and winners.csv "
                             "records none: add \"arch\": \"sm_XY\" (torch.cuda.get_device_capability) to it")
        for (shape, bt, arm), (ms, cfg) in best_per_cell(path).items():
            M, N = map(int, shape.split("x"))
            rule, state_dtype, hp, _ = ARMS[arm]
            state = fm.ForgeParamState.create(torch.zeros(1, 1, dtype=torch.bfloat16), rule, hp, state_dtype, "bf16")
            key = ops._tune_key(torch.zeros(int(bt), 1, dtype=torch.bfloat16),
                                torch.zeros(M, N, dtype=torch.bfloat16, device="meta"), state, None)
            cells = winners.key_cells(key)
            merged[(device, cells)] = (device, arch, cells, cfg, ms)
    winners.write(list(merged.values()))
    return len(merged)


def _report_rows(csv_path: str) -> list[dict]:
    """A results CSV's rows, FORGE at the swept best of the current configs where a sweep beside
    it timed one faster (speedup and % of floor follow), with the kernel that time is of."""
    rows = list(csv.DictReader(open(csv_path)))
    best = best_per_cell(csv_path)
    for r in rows:
        r["grid_forge_ms"] = r["forge_ms"]  # the time of the config the step chose (a bf16 twin's partner)
        ms, cfg = best.get((r["shape"], r["bt"], r["arm"]), (float(r["forge_ms"]), None))
        if ms < float(r["forge_ms"]):
            r["forge_ms"], r["speedup"] = ms, float(r["baseline_ms"]) / ms
            r["pct_floor"] = 100 * float(r["floor_ms"]) / ms
        r["kernel"] = cfg.kernel if cfg is not None else "?"
    return rows


# Issue #3's acceptance: "no slower" is a ratio >= 0.97 within one call.
NO_SLOWER, FLOOR_TARGET_PCT, MAINLOOP_TARGET_PCT = 0.97, 60.0, 85.0


def acceptance(csv_paths: list[str]) -> str:
    """Issue #3's targets over result CSVs (one device call each; the report's rows): per target
    and arm, how many cells meet it and the range of the measure, as a markdown table. int8 is
    compared with the bf16 step timed beside it in its own cell (``Cell.bf16_ms``), or in a CSV
    written before that column with the bf16 cell of the same call. The CSVs must come from one
    kind of device (their ``ceilings.json``): targets counted over two would mean neither."""
    devices = {path: ceilings_beside(path).get("device", "") for path in csv_paths}
    if len(set(devices.values()) - {""}) > 1:
        raise ValueError(f"these CSVs were measured on different devices ({devices}): count each device's apart")
    calls = [_report_rows(p) for p in csv_paths]
    rows = [r for call in calls for r in call]
    named = sorted(set(devices.values()) - {""})
    lines = ([f"Measured on {named[0]}.", ""] if named else []) + ["| target | arm | cells met | range |",
                                                                  "|---|---|---|---|"]

    def add(target: str, cells: list[dict], key: str, threshold: float, unit: str) -> None:
        arms = sorted({r["arm"] for r in cells})
        for arm in arms + (["all"] if len(arms) > 1 else []):
            values = [float(r[key]) for r in cells if arm in ("all", r["arm"])]
            lines.append(f"| {target} | {arm} | {sum(v >= threshold for v in values)} of {len(values)} | "
                         f"{min(values):.2f}–{max(values):.2f}{unit} |")

    large = [r for r in rows if int(r["bt"]) >= 4096]
    small = [r for r in rows if int(r["bt"]) <= 1024 and r["arm"] != "adamw-int8"]
    if large:
        add("BT ≥ 4096: no slower than the baseline (speedup)", large, "speedup", NO_SLOWER, "×")
        add("BT ≥ 4096: main-loop efficiency ≥ 85%", large, "mainloop_eff", MAINLOOP_TARGET_PCT, "%")
    if small:
        add("BT ≤ 1024: ≥ 60% of floor", small, "pct_floor", FLOOR_TARGET_PCT, "%")
    pairs = []
    for call in calls:
        by_cell = {(r["shape"], r["bt"], r["arm"]): r for r in call}
        for (shape, bt, arm), r in by_cell.items():
            bf16 = by_cell.get((shape, bt, "adamw-bf16"))
            if arm != "adamw-int8":
                continue
            if r.get("bf16_ms"):  # timed rep by rep beside this cell's own step
                pairs.append(dict(bt=bt, arm=arm, ratio=float(r["bf16_ms"]) / float(r["grid_forge_ms"]), twin=True))
            elif bf16 is not None:
                pairs.append(dict(bt=bt, arm=arm, ratio=float(bf16["forge_ms"]) / float(r["forge_ms"]), twin=False))
    for label, large_bt in (("BT ≥ 4096", True), ("BT ≤ 1024", False)):
        cells = [p for p in pairs if (int(p["bt"]) >= 4096) == large_bt]
        if cells:
            add(f"{label}: int8 no slower than bf16 (bf16 time ÷ int8 time)", cells, "ratio", NO_SLOWER, "×")
    if pairs:
        twins = sum(p["twin"] for p in pairs)
        lines.append(f"\nint8 against bf16: {twins} of {len(pairs)} cells with the bf16 step timed beside them in "
                     f"their own cell, {len(pairs) - twins} against the bf16 cell of the same call.")
    return "\n".join(lines) + "\n\n" + _serial_model(csv_paths, calls)


def _serial_model(csv_paths: list[str], calls: list[list[dict]]) -> str:
    """Per BT <= 1024 cell: the step against its main loop alone plus the epilogue's bytes (weight
    and states, read and written) at the call's copy bandwidth, the time if the two never overlap;
    and the L2 cap, the time if they overlapped perfectly but the epilogue's bytes cost the L2 what
    the main loop's slab reads do (main loop alone x (1 + epilogue bytes / slab bytes read from L2
    by the cell's tiles)), with the % of floor that time would be."""
    import ast

    lines = ["| shape | BT | arm | step µs | main loop alone µs | epilogue bytes ÷ copy µs | sum µs | step ÷ sum | "
             "L2 cap µs | % of floor at the cap |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for path, call in zip(csv_paths, calls):  # (calls: each CSV's report rows, read once by the caller)
        copy_gbps = ceilings_beside(path)["copy_gbps"]
        for r in call:
            if int(r["bt"]) > 1024:
                continue
            M, N = map(int, r["shape"].split("x"))
            bt = int(r["bt"])
            epilogue_bytes = int(r["bytes_moved"]) - 2 * bt * (M + N)  # all but dY and X (bf16), read once
            epilogue_us = epilogue_bytes / (copy_gbps * 1e3)
            step_us, loop_us = 1e3 * float(r["forge_ms"]), 1e3 * float(r["mainloop_ms"])
            # every tile reads its dY rows and X columns over all of BT (the grid's config: the main
            # loop ran the same one)
            cfg = ast.literal_eval(r["config"])
            bm, bn = cfg["block_m"], cfg["block_n"]
            l2_slab_bytes = -(-M // bm) * -(-N // bn) * (bm + bn) * bt * 2
            cap_us = loop_us * (1 + epilogue_bytes / l2_slab_bytes)
            floor_us = 1e3 * float(r["floor_ms"])
            lines.append(f"| {r['shape']} | {bt} | {r['arm']} | {step_us:.1f} | {loop_us:.1f} | "
                         f"{epilogue_us:.1f} | {loop_us + epilogue_us:.1f} | {step_us / (loop_us + epilogue_us):.2f} | "
                         f"{cap_us:.1f} | {100 * floor_us / max(cap_us, floor_us):.0f}% |")
    lines.append("\nThe main loop alone is a graph of one call, the step a graph of one call per rotation set, so "
                 "at the small cells the main loop carries more of a graph replay's fixed cost, and the sum and "
                 "the cap with it are too high by up to that cost (`scripts/device/graph_length.py` measures it "
                 "per cell and graph length).")
    return "\n".join(lines)


def _provenance(csv_path: str, out_dir: str) -> str:
    """Where a report's numbers come from: the device and ceilings of its call (its
    ``ceilings.json``), its CSV, and the command that writes the report again."""
    measured_on = ceilings_beside(csv_path)
    where = measured_on.get("device", "a device its CSV does not name (no ceilings.json beside it)")
    if measured_on.get("card"):
        where += f" (card {measured_on['card']})"
    if "copy_gbps" in measured_on:
        where += (f": copy {measured_on['copy_gbps']:,.0f} GB/s, cuBLAS bf16 {measured_on['bf16_tflops']:.0f} "
                  f"TFLOP/s, torch {measured_on.get('torch', '?')}, Triton {measured_on.get('triton', '?')}")
    return (f"Measured on {where} (`{csv_path}`). Regenerate: "
            f"`python -m forge_mcore.bench.kernel --report {csv_path} --out {out_dir}`.")


def write_report(csv_path: str, out_dir: str) -> str:
    """Markdown table, headed by where its numbers come from (``_provenance``), + PNG (time vs
    BT per arm and shape, floor drawn) from a results CSV. Where a sweep beside it timed a
    faster config still in ``CONFIGS`` (what ``--winners`` then commits), FORGE is that config's
    time, and speedup and % of floor follow it; the main-loop efficiency stays the grid's."""
    rows = _report_rows(csv_path)
    os.makedirs(out_dir, exist_ok=True)
    lines = [
        _provenance(csv_path, out_dir),
        "",
        "| shape | BT | arm | FORGE ms | kernel | baseline ms | speedup | % of floor | main-loop eff. | floor ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['shape']} | {r['bt']} | {r['arm']} | {float(r['forge_ms']):.4f} | {r['kernel']} | "
            f"{float(r['baseline_ms']):.4f} | {float(r['speedup']):.2f}x | {float(r['pct_floor']):.1f}% | "
            f"{float(r['mainloop_eff']):.1f}% | {float(r['floor_ms']):.4f} |"
        )
    table = "\n".join(lines)
    with open(os.path.join(out_dir, "kernel_table.md"), "w") as f:
        f.write(table + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: table written, no plot", file=sys.stderr)
        return table
    shapes = sorted({r["shape"] for r in rows}, key=lambda s: DEFAULT_SHAPES.index(s) if s in DEFAULT_SHAPES else 99)
    fig, axes = plt.subplots(1, len(shapes), figsize=(4.5 * len(shapes), 4), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        sub = [r for r in rows if r["shape"] == shape]
        for arm in sorted({r["arm"] for r in sub}):
            pts = sorted((int(r["bt"]), float(r["forge_ms"])) for r in sub if r["arm"] == arm)
            ax.plot(*zip(*pts), marker="o", label=f"FORGE {arm}")
            base = sorted((int(r["bt"]), float(r["baseline_ms"])) for r in sub if r["arm"] == arm)
            ax.plot(*zip(*base), linestyle="--", marker="x", label=f"baseline {arm}")
        floor = sorted({(int(r["bt"]), float(r["floor_ms"])) for r in sub if r["arm"] == "adamw-bf16"})
        if floor:
            ax.plot(*zip(*floor), color="black", linewidth=2, label="floor (adamw bf16)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(shape)
        ax.set_xlabel("BT")
        ax.set_ylabel("ms")
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "kernel_bench.png"), dpi=120)
    return table


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="directory for kernel.csv, ceilings.json, table and plot")
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES))
    p.add_argument("--bts", default=",".join(map(str, DEFAULT_BTS)))
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--report", metavar="CSV", help="only regenerate the table and plot from CSV")
    p.add_argument("--sweep", action="store_true", help="also time every candidate tile config (sweep.csv)")
    p.add_argument("--sweep-configs", choices=("all", "candidates"), default="all",
                   help="what --sweep times: CONFIGS and CANDIDATES, or CANDIDATES only (beside the tuned config)")
    p.add_argument("--sweep-kernels", default=",".join(KERNELS),
                   help="the kernels whose configs --sweep times (e.g. leave out one that hangs)")
    p.add_argument("--winners", metavar="CSV[,CSV...]", help="only write kernels/winners.csv from benchmark CSVs")
    p.add_argument("--acceptance", metavar="CSV[,CSV...]",
                   help="only print issue #3's targets over benchmark CSVs (one device call each)")
    args = p.parse_args(argv)
    if args.acceptance:
        try:
            print(acceptance(args.acceptance.split(",")))
        except ValueError as e:
            p.error(str(e))
        return
    if args.winners:
        print(f"{write_winners(args.winners.split(','))} winners in forge_mcore/kernels/winners.csv")
        return
    if args.report:
        print(write_report(args.report, args.out))
        return
    if not args.out:
        p.error("--out is required (except with --winners)")
    if args.sweep:
        try:
            sweep_pool(args.sweep_configs, tuple(args.sweep_kernels.split(",")))
        except ValueError as e:
            p.error(str(e))
    # The benchmark measures today's tuning, not the committed winners it may then replace.
    os.environ.setdefault("FORGE_AUTOTUNE", "1")
    if not torch.cuda.is_available():
        raise SystemExit("the kernel benchmark needs a CUDA device")
    from forge_mcore.bench.common import environment, measure_ceilings, write_json

    os.makedirs(args.out, exist_ok=True)
    ceilings = measure_ceilings()
    write_json(os.path.join(args.out, "ceilings.json"), {**asdict(ceilings), **environment()})
    print(f"ceilings: copy {ceilings.copy_gbps:.0f} GB/s, cuBLAS bf16 {ceilings.bf16_tflops:.0f} TFLOP/s", flush=True)
    csv_path = os.path.join(args.out, "kernel.csv")
    sweep_path = os.path.join(args.out, "sweep.csv")
    sweep: list | None = [] if args.sweep else None
    sweep_written = 0
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        # BT outermost, ascending: BT <= 1024 cells run after BT 16384 ones (seconds of full-power
        # GEMM) measured 4-14% slower than in runs of BT <= 1024 cells only (session 15)
        for bt in sorted(map(int, args.bts.split(","))):
            for shape in args.shapes.split(","):
                for arm in args.arms.split(","):
                    cell = run_cell(shape, bt, arm, ceilings, reps=args.reps, sweep=sweep,
                                    sweep_configs=args.sweep_configs,
                                    sweep_kernels=tuple(args.sweep_kernels.split(",")))
                    writer.writerow(asdict(cell))
                    f.flush()
                    print(f"{shape:>12} BT={bt:<6} {arm:<11} forge {cell.forge_ms:.4f} ms  base "
                          f"{cell.baseline_ms:.4f}  x{cell.speedup:.2f}  floor {cell.pct_floor:.0f}%  "
                          f"mainloop {cell.mainloop_eff:.0f}%"
                          + (f"  bf16 beside it {cell.bf16_ms:.4f} ms" if cell.bf16_ms else ""), flush=True)
                    if sweep:  # written cell by cell: a run cut short keeps what it timed
                        with open(sweep_path, "a" if sweep_written else "w", newline="") as sf:
                            sweep_writer = csv.DictWriter(sf, fieldnames=list(sweep[0]))
                            if not sweep_written:
                                sweep_writer.writeheader()
                            sweep_writer.writerows(sweep[sweep_written:])
                        sweep_written = len(sweep)
                    torch.cuda.empty_cache()
    if sweep:
        for row in sorted(sweep, key=lambda r: (r["shape"], r["bt"], r["arm"], r["forge_ms"])):
            print(f"sweep {row['shape']} BT={row['bt']} {row['arm']}: {row['forge_ms']:.4f} ms {row['config']}")
    print(write_report(csv_path, args.out))


if __name__ == "__main__":
    main()
