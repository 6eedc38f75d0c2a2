"""Single-GPU end-to-end benchmark: FORGE against torch AdamW and the memory-efficient peers.

    python -m forge_mcore.bench.e2e --out results/e2e                      # peer table, Qwen3-8B bs1 s512
    python -m forge_mcore.bench.e2e --table scale --out results/e2e        # fused AdamW vs FORGE bf16/int8
    python -m forge_mcore.bench.e2e --arms fused,forge-int8,bnb8bit --out results/e2e
    python -m forge_mcore.bench.e2e --smoke --arms fused,forge-bf16 --out /tmp/e2e   # CPU, tiny config
    python -m forge_mcore.bench.e2e --report a/e2e_peer.csv,b/e2e_peer.csv --out results/e2e  # CSV(s) -> table, PNG

Method (DESIGN.md "Measuring", paper App. C): each arm runs in its own
process; the model is HF Qwen3 built from its config (random init, bf16
weights, batch 1, sequence 512 by default); after ``--warmup`` steps the peak
counter is reset, then ``--steps`` steps are timed one by one (synchronized);
peak = ``torch.cuda.max_memory_allocated()`` over those steps in GB = 2**30
bytes; step time = their median; TFLOP/s = model FLOPs per step / step time,
with FLOPs = 6 * tokens * (matmul parameters) + 6 * layers * tokens * seq *
(heads * head_dim) (causal attention, forward + backward). Every invocation
runs its own torch fused AdamW arm, and ratios are only drawn against it.
Writes ``e2e_<table>.csv`` (and ``.png`` when matplotlib is installed) under
``--out`` and prints the summary table last.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

LR = 1e-5
# arm -> (package that must be importable, or None; what it is)
ARMS: dict[str, tuple[str | None, str]] = {
    "vanilla": (None, "torch AdamW, foreach"),
    "fused": (None, "torch AdamW, fused=True"),
    "forge-bf16": (None, "FORGE, bf16 states"),
    "forge-int8": (None, "FORGE, int8 states"),
    "forge-fp8": (None, "FORGE, fp8 states"),
    "forge-bf16+loss": (None, "FORGE, bf16 states, LM head fused with the loss on torch ops (loss_backend='torch')"),
    "forge-int8+loss": (None, "FORGE, int8 states, LM head fused with the loss on torch ops (loss_backend='torch')"),
    "forge-bf16+lossk": (None, "FORGE, bf16 states, fused loss on its Triton kernels (loss_backend='triton')"),
    "forge-int8+lossk": (None, "FORGE, int8 states, fused loss on its Triton kernels (loss_backend='triton')"),
    "bnb8bit": ("bitsandbytes", "bitsandbytes AdamW8bit"),
    "torchao8bit": ("torchao", "torchao AdamW8bit"),
    "optimi-release": ("optimi", "torch-optimi AdamW, gradient release"),
    "flashoptim": ("flashoptim", "FlashOptim FlashAdamW (cast_model, 24-bit master), gradient release"),
    "galore": ("galore_torch", "GaLore AdamW, rank 128"),
    "apollo": ("apollo_torch", "APOLLO AdamW, rank 256"),
    "adalomo": ("lomo_optim", "AdaLomo"),
    "forge-int8+bnb": ("bitsandbytes", "FORGE int8 states, bitsandbytes AdamW8bit for the unfused rest"),
}
PEER_ARMS = list(ARMS)
SCALE_ARMS = ["fused", "forge-bf16", "forge-int8"]
SCALE_CELLS = [(m, s) for m in ("qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b") for s in (512, 2048)] + [
    ("qwen3-14b", 512)]
PIP_NAMES = {"bitsandbytes": "bitsandbytes", "torchao": "torchao", "optimi": "torch-optimi",
             "flashoptim": "flashoptim", "galore_torch": "galore-torch", "apollo_torch": "apollo-torch",
             "lomo_optim": "lomo-optim"}


@dataclass
class Cell:
    """One arm on one model shape: what a worker process runs."""

    arm: str
    model: str
    seq: int
    batch: int = 1
    warmup: int = 3
    steps: int = 20  # the step is host-bound at batch 1: timed steps spread by +-20%
    device: str = "cuda"


@dataclass
class Row:
    table: str
    model: str
    seq: int
    batch: int
    arm: str
    status: str = "ok"
    peak_gb: float = math.nan
    step_ms: float = math.nan
    step_ms_min: float = math.nan
    step_ms_max: float = math.nan
    tflops: float = math.nan
    time_vs_fused: float = math.nan
    peak_vs_fused: float = math.nan
    coverage: float = math.nan
    description: str = ""
    env: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------
# the worker: one arm, one process
# ---------------------------------------------------------------------------

def _decoder_matrices(model) -> tuple[list, list]:
    """(2-D weights of the decoder's linear layers, everything else): the low-rank methods' split."""
    low, rest = [], []
    for name, p in model.named_parameters():
        (low if p.dim() == 2 and (".self_attn." in name or ".mlp." in name) else rest).append(p)
    return low, rest


def _make_arm(arm: str, model) -> tuple[Callable[[Any], None], dict[str, Any]]:
    """(step(loss) -> None doing backward and the update, extras to report).
    A FORGE arm ending in ``:triton`` steps with ``FORGE_GLUON=0`` (the Triton kernel only), so
    both kernels can be compared in one process (``scripts/device/host_overhead.py``)."""
    import os
    from unittest import mock

    import torch

    if arm.startswith("forge") and arm.endswith(":triton"):
        inner, extras = _make_arm(arm.removesuffix(":triton"), model)

        def triton_only(loss: torch.Tensor) -> None:
            with mock.patch.dict(os.environ, FORGE_GLUON="0"):
                inner(loss)
        return triton_only, extras

    from ..nn import patch

    def standard(opt: torch.optim.Optimizer) -> Callable[[torch.Tensor], None]:
        def step(loss: torch.Tensor) -> None:
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step

    params = [p for p in model.parameters() if p.requires_grad]
    if arm in ("vanilla", "fused"):
        return standard(torch.optim.AdamW(params, lr=LR, foreach=arm == "vanilla", fused=arm == "fused")), {}
    if arm.startswith("forge"):
        state = "int8" if "int8" in arm else "fp8" if "fp8" in arm else "bf16"
        # the unfused rest gets the same optimizer as the baseline it is compared with
        fallback = lambda groups: torch.optim.AdamW(groups, fused=True)  # noqa: E731
        if arm.endswith("+bnb"):
            import bitsandbytes as bnb

            fallback = bnb.optim.AdamW8bit
        fused_loss = arm.endswith(("+loss", "+lossk"))
        opt = patch(model, state_dtype=state, lr=LR, clip="none", fallback=fallback, fused_loss=fused_loss,
                    loss_backend=("triton" if arm.endswith("+lossk") else "torch") if fused_loss else None)
        return standard(opt), {"coverage": opt.report.coverage, "summary": opt.summary()}
    if arm == "bnb8bit":
        import bitsandbytes as bnb

        return standard(bnb.optim.AdamW8bit(params, lr=LR)), {}
    if arm == "torchao8bit":
        from torchao.optim import AdamW8bit

        return standard(AdamW8bit(params, lr=LR)), {}
    if arm in ("optimi-release", "flashoptim"):
        if arm == "optimi-release":
            import optimi

            opt = optimi.AdamW(params, lr=LR, gradient_release=True)
            optimi.prepare_for_gradient_release(model, opt)
        else:
            import flashoptim

            flashoptim.cast_model(model, dtype=torch.bfloat16)
            opt = flashoptim.FlashAdamW([p for p in model.parameters() if p.requires_grad], lr=LR)
            flashoptim.enable_gradient_release(model, opt)
        return (lambda loss: loss.backward()), {}  # parameters step inside backward
    if arm in ("galore", "apollo"):
        low, rest = _decoder_matrices(model)
        if arm == "galore":
            from galore_torch import GaLoreAdamW as cls

            extra = dict(rank=128, update_proj_gap=200, scale=0.25, proj_type="std")
        else:
            from apollo_torch import APOLLOAdamW as cls

            extra = dict(rank=256, proj="random", scale_type="channel", scale=1.0, update_proj_gap=200,
                         proj_type="std")
        return standard(cls([{"params": rest}, {"params": low, **extra}], lr=LR)), {}
    if arm == "adalomo":
        from lomo_optim import AdaLomo

        opt = AdaLomo(model, lr=LR)
        return (lambda loss: opt.fused_backward(loss, LR)), {}
    raise ValueError(f"unknown arm {arm!r}; known: {list(ARMS)}")


def _flops_per_step(model, tokens: int, seq: int) -> float:
    c = model.config
    matmul = sum(p.numel() for n, p in model.named_parameters() if p.dim() >= 2 and "embed_tokens" not in n)
    if c.tie_word_embeddings:  # the LM head is the embedding matrix, still a matmul
        matmul += model.get_input_embeddings().weight.numel()
    attn = c.num_hidden_layers * tokens * seq * c.num_attention_heads * getattr(c, "head_dim", 0)
    return 6.0 * tokens * matmul + 6.0 * attn


def run_cell(cell: Cell) -> dict[str, Any]:
    """Build the model, set up the arm, time it; returns the measurements."""
    import torch

    from ..models import build_model, example_batch, training_loss

    cuda = cell.device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise RuntimeError("no CUDA device: run on the GPU machine, or pass --smoke for the CPU check")
    if not cuda:
        torch.set_num_threads(1)  # tiny CPU smoke model: threads only contend
    model = build_model(cell.model, dtype=torch.bfloat16, device=cell.device, seed=0)
    model.config.use_cache = False
    step, extras = _make_arm(cell.arm, model)
    gen = torch.Generator().manual_seed(0)
    batch = example_batch(model, cell.batch, cell.seq, generator=gen)
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    times, losses = [], []
    for i in range(cell.warmup + cell.steps):
        if i == cell.warmup and cuda:
            torch.cuda.reset_peak_memory_stats()
        sync()
        t0 = time.perf_counter()
        loss = training_loss(model, batch)
        step(loss)
        sync()
        if i >= cell.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss.item())
    if not all(math.isfinite(v) for v in losses):
        raise FloatingPointError(f"non-finite loss: {losses}")
    step_ms = statistics.median(times)
    return {
        "peak_gb": torch.cuda.max_memory_allocated() / 2**30 if cuda else math.nan,
        "step_ms": step_ms, "step_ms_min": min(times), "step_ms_max": max(times),
        "tflops": _flops_per_step(model, cell.batch * cell.seq, cell.seq) / (step_ms * 1e-3) / 1e12,
        "coverage": extras.get("coverage", math.nan), "summary": extras.get("summary", ""),
        "loss_first": losses[0], "loss_last": losses[-1],
    }


# ---------------------------------------------------------------------------
# the driver: one process per arm, a table, files
# ---------------------------------------------------------------------------

def _environment(device: str) -> dict[str, Any]:
    import torch
    import transformers

    from .common import environment

    env = environment() if device == "cuda" else {"torch": torch.__version__, "device": "cpu"}
    return {**env, "transformers": transformers.__version__}


def _spawn(cell: Cell, timeout: float) -> tuple[str, dict[str, Any]]:
    """Run one cell in a fresh interpreter; (status, measurements)."""
    cmd = [sys.executable, "-m", "forge_mcore.bench.e2e", "--worker", json.dumps(asdict(cell))]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout:.0f} s", {}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return "ok", json.loads(line[len("RESULT "):])
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    if "OutOfMemoryError" in proc.stderr or "out of memory" in proc.stderr:
        return "OOM", {}
    return f"error (exit {proc.returncode}): {tail[:200]}", {}


def run_table(table: str, cells: list[tuple[str, int]], arms: list[str], args: argparse.Namespace) -> list[Row]:
    rows = []
    env = _environment(args.device)
    for model_name, seq in cells:
        fused = None
        for arm in arms:
            package, description = ARMS[arm]
            row = Row(table, model_name, seq, args.batch, arm, description=description, env=env)
            if package is not None and importlib.util.find_spec(package) is None:
                row.status = f"not installed (pip install {PIP_NAMES[package]})"
            else:
                cell = Cell(arm, model_name, seq, args.batch, args.warmup, args.steps, args.device)
                print(f"[e2e] {model_name} seq {seq}: {arm} ...", flush=True)
                row.status, result = _spawn(cell, args.timeout)
                for key in ("peak_gb", "step_ms", "step_ms_min", "step_ms_max", "tflops", "coverage"):
                    setattr(row, key, result.get(key, math.nan))
                if result.get("summary"):
                    print(result["summary"], flush=True)
            if arm == "fused":
                fused = row
            rows.append(row)
        for row in rows[-len(arms):]:
            if fused is not None and fused.status == "ok" and row.status == "ok":
                row.time_vs_fused = row.step_ms / fused.step_ms
                row.peak_vs_fused = row.peak_gb / fused.peak_gb if fused.peak_gb else math.nan
    return rows


def write_outputs(rows: list[Row], out: str, table: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"e2e_{table}.csv")
    fields = [f for f in Row.__dataclass_fields__ if f != "env"] + ["env"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({**asdict(row), "env": json.dumps(row.env, default=str)})
    written = [path]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[e2e] matplotlib is not installed: PNG skipped (pip install matplotlib)")
        return written
    ok = [r for r in rows if r.status == "ok"]
    labels = [f"{r.arm}\n{r.model} s{r.seq}" if table == "scale" else r.arm for r in ok]
    fig, axes = plt.subplots(1, 2, figsize=(max(8.0, 0.7 * len(ok) + 4), 4.5))
    for ax, key, title in ((axes[0], "peak_gb", "peak memory (GB = 2^30 B)"), (axes[1], "step_ms", "step time (ms)")):
        ax.bar(range(len(ok)), [getattr(r, key) for r in ok],
               color=["tab:orange" if r.arm.startswith("forge") else "tab:blue" for r in ok])
        ax.set_xticks(range(len(ok)), labels, rotation=60, ha="right", fontsize=7)
        ax.set_title(title)
    cells = sorted({(r.model, r.seq, r.batch) for r in rows})
    fig.suptitle("; ".join(f"{m} bs{b} seq{s}" for m, s, b in cells[:3]) + (" ..." if len(cells) > 3 else ""))
    fig.tight_layout()
    png = os.path.join(out, f"e2e_{table}.png")
    fig.savefig(png, dpi=120)
    written.append(png)
    return written


def read_rows(path: str) -> list[Row]:
    """The rows of an ``e2e_<table>.csv`` written by ``write_outputs`` (``--report``)."""
    kinds = {name: f.type for name, f in Row.__dataclass_fields__.items()}
    rows = []
    with open(path, newline="") as f:
        for record in csv.DictReader(f):
            values: dict[str, Any] = {}
            for name, kind in kinds.items():
                text = record.get(name, "")
                if kind == "int":
                    values[name] = int(text)
                elif kind == "float":
                    values[name] = float(text) if text not in ("", "nan") else math.nan
                elif kind == "dict":
                    values[name] = json.loads(text) if text else {}
                else:
                    values[name] = text
            rows.append(Row(**values))
    return rows


def format_table(rows: list[Row]) -> str:
    head = f"{'model':<14}{'seq':>6} {'arm':<16}{'peak GB':>9}{'step ms':>9}{'TF/s':>7}{'t/fused':>8}{'m/fused':>8}" \
           f"{'cover':>7}  status"
    lines = [head, "-" * len(head)]
    for r in rows:
        def num(v: float, fmt: str) -> str:
            return format(v, fmt) if isinstance(v, float) and math.isfinite(v) else "-"
        lines.append(f"{r.model:<14}{r.seq:>6} {r.arm:<16}{num(r.peak_gb, '9.2f'):>9}{num(r.step_ms, '9.1f'):>9}"
                     f"{num(r.tflops, '7.0f'):>7}{num(r.time_vs_fused, '8.2f'):>8}{num(r.peak_vs_fused, '8.2f'):>8}"
                     f"{num(r.coverage, '7.3f'):>7}  {r.status}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m forge_mcore.bench.e2e", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"arms: {', '.join(ARMS)}")
    p.add_argument("--table", choices=("peer", "scale"), default="peer",
                   help="peer: every arm on one model; scale: fused AdamW vs FORGE bf16/int8 over Qwen3 sizes")
    p.add_argument("--model", default="qwen3-8b", help="peer table model (forge_mcore.models name)")
    p.add_argument("--seq", type=int, default=512, help="peer table sequence length")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--cells", default=None,
                   help="scale table cells as model:seq,... (default: 0.6b-8b at 512 and 2048, 14b at 512)")
    p.add_argument("--arms", default=None, help="comma-separated arms (fused is always added)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per arm process")
    p.add_argument("--out", default="e2e_results", help="directory for the CSV and PNG")
    p.add_argument("--smoke", action="store_true",
                   help="CPU check of the whole pipeline: qwen3-tiny, seq 16, 1 warm-up + 2 steps")
    p.add_argument("--report", default=None, metavar="CSV[,CSV...]",
                   help="run nothing: read e2e_<table>.csv file(s) written earlier (e.g. on the GPU machine), write "
                   "them as one CSV (and the PNG, with matplotlib) under --out and print the table")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.report is not None:
        args.report = [path for path in args.report.split(",") if path]
        missing = [path for path in args.report if not os.path.isfile(path)]
        if missing or not args.report:
            p.error(f"--report: no such file(s) {missing or args.report}")
        return args
    args.device = "cpu" if args.smoke else "cuda"
    if args.smoke:
        args.model, args.seq, args.warmup, args.steps = "qwen3-tiny", 16, 1, 2
        args.cells = args.cells or "qwen3-tiny:16"
    elif args.warmup < 3 or args.steps < 10:
        p.error("the protocol needs --warmup >= 3 and --steps >= 10 (use --smoke for a quick CPU check)")
    arms = args.arms.split(",") if args.arms else (SCALE_ARMS if args.table == "scale" else PEER_ARMS)
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        p.error(f"unknown arm(s) {unknown}; known: {', '.join(ARMS)}")
    args.arm_list = ["fused"] + [a for a in arms if a != "fused"]
    if args.cells:
        try:
            args.cell_list = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cells.split(",")]
        except (IndexError, ValueError):
            p.error(f"--cells must look like qwen3-8b:512,qwen3-14b:512, got {args.cells!r}")
    else:
        args.cell_list = SCALE_CELLS if args.table == "scale" else [(args.model, args.seq)]
    from ..models import MODELS

    bad = [m for m, _ in args.cell_list if m not in MODELS or MODELS[m][0] != "qwen3"]
    if bad:
        p.error(f"the benchmark model must be an HF Qwen3 name from forge_mcore.models, got {bad}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        result = run_cell(Cell(**json.loads(args.worker)))
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    if args.report is not None:
        rows = [row for path in args.report for row in read_rows(path)]
        tables = sorted({r.table for r in rows})
        written = write_outputs(rows, args.out, "+".join(tables) or "peer")
        print(f"[e2e] wrote {', '.join(written)}")
        print(format_table(rows))
        return 0
    rows = run_table(args.table, args.cell_list, args.arm_list, args)
    written = write_outputs(rows, args.out, args.table)
    print(f"[e2e] wrote {', '.join(written)}")
    print(format_table(rows))
    return 0 if all(r.status == "ok" or r.status.startswith("not installed") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
