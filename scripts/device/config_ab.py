"""Tile configs against each other: the same step's bits, then its time, arms interleaved.

    python3 scripts/device/config_ab.py        # device; env CELLS, ARMS, ROUNDS
    -> one JSON line per cell and config, and $OUT/config_ab.csv
    CHECK=1 DEVICE="NVIDIA H100 80GB HBM3" python3 scripts/device/config_ab.py   # no GPU: VARY checked, then stop

The arms are a reference and every config in ``CANDIDATES``: the first ``gluon_ws`` config of
``CONFIGS``, or with REFERENCE=winner the config a step picks for the cell (its committed
winner). With VARY="f=v[,f=v...];..." the arms are the reference and, per ";"-separated
alternative, the reference with those TileConfig fields replaced instead
(VARY="group_m=16;group_m=1024": the tile order; a duplicate of the reference is dropped).
Before any tensor is made, every VARY alternative is applied to each reference it could meet on the
card (DEVICE, else the GPU's name): the ``gluon_ws`` reference, or with REFERENCE=winner the card's
committed winners of each cell and arm (``check_vary``); a replacement that makes an invalid config stops the run with
TileConfig's error (CHECK=1: on the development machine, before device time is spent on it).
WARM_ONLY=1 stops after the bits (it compiles every arm: run cells in parallel processes first,
so the timed run finds them in Triton's cache).
Per cell (``MxN:BT``) and arm (``bench.kernel.ARMS``): each config steps the same weight and
states from the same dY/X twice, and its bits must equal the reference's (else the row says so
and the config is not timed: a faster kernel with other results is not faster; a Gluon config whose kernel does
not fit the cell runs its Triton geometry, whose bits differ: ``runs_as_labelled`` False). Then ROUNDS
rounds time every config's graph-replayed step over rotating weight sets
(``bench.common.time_graph``), the order reversed each round (this host drifts); the median per
config and its speedup over the reference; last a summary, one line per config with the fields in which
it differs from its cell's reference.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import statistics
from dataclasses import asdict

import torch

import forge_mcore as fm
from forge_mcore.bench.common import rotation_count, time_graph
from forge_mcore.bench.kernel import ARMS, runs_as_labelled
from forge_mcore.kernels import winners
from forge_mcore.kernels.configs import CANDIDATES, CONFIGS, TileConfig

GLUON_REFERENCE = next(c for c in CONFIGS if c.kernel == "gluon_ws")
CELLS = os.environ.get("CELLS", "4096x4096:1024,12288x4096:1024,4096x4096:512,1024x4096:1024").split(",")
ARM_NAMES = os.environ.get("ARMS", "adamw-bf16").split(",")
ROUNDS = int(os.environ.get("ROUNDS", 3))
VARY = os.environ.get("VARY", "")


def _arms(reference) -> list:
    """The reference and what it is compared with (``VARY``, else ``CANDIDATES``)."""
    if not VARY:
        return [reference, *[c for c in CANDIDATES if c != reference]]
    arms = [reference]
    for alternative in VARY.split(";"):
        arm = reference.replaced(alternative)
        if arm not in arms:
            arms.append(arm)
    return arms


def committed_winners(cell: str, arm: str, device: str) -> list[TileConfig]:
    """The committed winners a step on ``device`` may pick for a cell (``MxN:BT``) and arm: that card's rows, or
    with none every card's (``winners.lookup`` falls back to another card of the architecture)."""
    shape, bt = cell.split(":")
    out_features, in_features = shape.split("x")
    rule, state_dtype, _, _ = ARMS[arm]
    key = ("step", out_features, in_features, str(1 << (int(bt) - 1).bit_length()))
    rows = [(card, cfg) for (card, _), table in winners.load(winners.WINNERS_CSV).items()
            for cells, cfg in table.items() if cells[:4] == key and (cells[7], cells[9]) == (rule, state_dtype)]
    own = [cfg for card, cfg in rows if card == device]
    return own or [cfg for _, cfg in rows]


def check_vary(device: str) -> int:
    """Apply every VARY alternative to each reference the cells and arms could meet on ``device`` (with
    REFERENCE=winner its ``committed_winners``, else the ``gluon_ws`` reference): TileConfig's ValueError, naming
    the config and what to change, before any tensor is made. Returns how many references were checked."""
    if os.environ.get("REFERENCE") != "winner":
        references = {GLUON_REFERENCE}
    else:
        references = {cfg for cell in CELLS for arm in ARM_NAMES for cfg in committed_winners(cell, arm, device)}
    for reference in references:
        _arms(reference)
    return len(references)


def run_cell(cell: str, arm: str) -> list[dict]:
    shape, bt = cell.split(":")
    M, N = map(int, shape.split("x"))
    rule, state_dtype, hp, _ = ARMS[arm]
    gen = torch.Generator(device="cuda").manual_seed(0)
    dy = torch.randn(int(bt), M, device="cuda", dtype=torch.bfloat16, generator=gen)
    x = torch.randn(int(bt), N, device="cuda", dtype=torch.bfloat16, generator=gen)
    w0 = (torch.randn(M, N, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
    tel = fm.StepTelemetry.zeros("cuda")

    def fresh():
        w = w0.clone()
        state = fm.ForgeParamState.create(w, rule, hp, state_dtype, "bf16")
        return w, state, state.prepare_step(state.rule.make_group(**hp))

    def step(cfg, w, state, hyper):
        return lambda: fm.fused_wgrad_step(dy, x, w, state, hyper, telemetry=tel, config=cfg)

    reference = GLUON_REFERENCE
    if os.environ.get("REFERENCE") == "winner":
        probe = fresh()
        step(None, *probe)()
        reference = fm.ops.tuned_config(dy, probe[0], probe[1])
    ARMS_AB = _arms(reference)
    bits, labelled = [], []
    for cfg in ARMS_AB:
        w, state, hyper = fresh()
        for _ in range(2):
            step(cfg, w, state, hyper)()
        bits.append([w] + [s.data for s in state.slots if s is not None])
        labelled.append(runs_as_labelled(cfg, state, dy))
    torch.cuda.synchronize()
    same = [all(torch.equal(a, b) for a, b in zip(t, bits[0])) for t in bits]
    if os.environ.get("WARM_ONLY"):
        print(json.dumps(dict(cell=cell, arm=arm, warmed=len(ARMS_AB), bits_equal=same)), flush=True)
        return []

    probe_w, probe_state, _ = fresh()
    sets = rotation_count(2 * probe_w.nbytes + 2 * probe_state.nbytes + dy.nbytes + x.nbytes)
    timed = {n: [fresh() for _ in range(sets)] for n in range(len(ARMS_AB)) if same[n]}
    times: dict[int, list[float]] = {n: [] for n in timed}
    for r in range(ROUNDS):
        for n in (list(timed) if r % 2 == 0 else list(timed)[::-1]):
            times[n].append(time_graph([step(ARMS_AB[n], *arms) for arms in timed[n]], reps=30))
    ref_ms = statistics.median(times[0])
    rows = []
    for n, cfg in enumerate(ARMS_AB):
        ms = statistics.median(times[n]) if n in times else float("nan")
        rows.append(dict(cell=cell, arm=arm, config=str(asdict(cfg)), reference=n == 0, bits_equal_reference=same[n],
                         runs_as_labelled=labelled[n], ms=ms, speedup=ref_ms / ms, rounds=times.get(n, [])))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    device = os.environ.get("DEVICE") or (torch.cuda.get_device_name() if torch.cuda.is_available() else "")
    if not device:
        cards = sorted(card for card, _ in winners.load(winners.WINNERS_CSV))
        raise SystemExit(f"no GPU here: name the card whose winners VARY is checked against, DEVICE=one of {cards}")
    checked = check_vary(device)
    if os.environ.get("CHECK"):
        print(f"VARY applies to all {checked} references of {CELLS} x {ARM_NAMES} on {device}")
        return
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    rows = []
    out = os.environ.get("OUT", ".")
    for cell in CELLS:
        for arm in ARM_NAMES:
            rows += run_cell(cell, arm)
            if not rows:
                continue
            with open(os.path.join(out, "config_ab.csv"), "w", newline="") as f:  # rewritten per cell
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    print("summary:")
    for line in summary(rows):
        print(line, flush=True)


def summary(rows: list[dict]) -> list[str]:
    """One line per timed config: its cell and arm, the reference's kernel and ring, the fields in which it
    differs from its cell's reference, its time, speedup and whether its bits equal the reference's."""
    lines, reference = [], {}
    for r in rows:
        cfg = ast.literal_eval(r["config"])
        if r["reference"]:
            reference[(r["cell"], r["arm"])] = cfg
            changed = f"{cfg['kernel']} stages {cfg['num_stages']} ring {cfg['tile_ring']} (reference)"
        else:
            base = reference[(r["cell"], r["arm"])]
            changed = ", ".join(f"{k}={v}" for k, v in cfg.items() if base.get(k) != v) or "the reference"
        ran = "" if str(r.get("runs_as_labelled", True)) == "True" else " (ran its Triton geometry)"
        lines.append(f"{r['cell']} {r['arm']} {changed}: {r['ms'] * 1000:.2f} us x{r['speedup']:.3f} "
                     f"bits {r['bits_equal_reference']}{ran}")
    return lines


if __name__ == "__main__":
    main()
