"""Compile the fused kernel for sm_90 without a GPU (Triton's compiler and ptxas only).

    python scripts/compile_check.py            # every rule/codec/store on both tile paths
    python scripts/compile_check.py --quick    # one variant per codec and store
    python scripts/compile_check.py --gluon --quick   # the Gluon kernels
    python scripts/compile_check.py --gluon --sass --shard 0/2   # every other variant (the CPU test
                                                                 # runs both halves side by side)

Catches what the interpreter cannot (type errors on the TMA path, casts the
interpreter forgives) and reports registers and spills per variant, before any
device time is spent. The launcher runs unchanged; only the final launch is
replaced by an ahead-of-time compile for an H100/H200 target.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.experimental.gluon._runtime import GluonASTSource
from triton.runtime.jit import mangle_type

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import forge_mcore as fm  # noqa: E402
from forge_mcore import ops  # noqa: E402
from forge_mcore.kernels import cross_entropy, fused_wgrad, gluon_wgrad  # noqa: E402
from forge_mcore.kernels.configs import CANDIDATES, CONFIGS  # noqa: E402

CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
results: list[str] = []
SASS_HISTOGRAM = False
SASS_DIR: str | None = None  # --dump-sass: each variant's SASS, numbered by its index in compile order
SHARD, SHARDS = 0, 1  # --shard I/N: only the variants whose index in compile order is I modulo N
_variants_seen = 0
# Instruction classes worth watching in the epilogue: special-function unit (div/sqrt),
# shared-memory traffic and barriers (layout conversions), conversions, tensor cores.
_SASS_CLASSES = {"MUFU": "MUFU", "LDS": "LDS", "STS": "STS", "BAR": "BAR", "SHFL": "SHFL",
                 "F2F": "F2F", "F2FP": "F2FP", "HGMMA": "HGMMA", "LDG": "LDG", "STG": "STG", "UTMA": "UTMA"}


def sass_text(cubin: bytes) -> str:
    """A compiled kernel's SASS (``cuobjdump -sass`` of ``ck.asm["cubin"]``); the probes in scripts/ use it too."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([CUOBJDUMP, "-sass", f.name], capture_output=True, text=True).stdout


def _sass_histogram(sass: str) -> str:
    """Static instruction count of the kernel, total and per watched class."""
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", sass)
    counts = {k: sum(op.startswith(prefix) for op in ops) for k, prefix in _SASS_CLASSES.items()}
    counts["F2FP"] = sum(op == "F2FP" or op.startswith("F2FP.") for op in ops)
    counts["F2F"] -= counts["F2FP"]
    # GPU-scope fences: an acq_rel atomic brings two per add (the telemetry's are relaxed)
    counts["MEMBAR.GPU"] = len(re.findall(r"MEMBAR\.\w+\.GPU", sass))
    return f"sass {len(ops)} " + " ".join(f"{k}={v}" for k, v in counts.items() if v)


class _OfflineCompile:
    """Stands in for ``kernel[grid]``: compiles for sm_90a and records resource usage."""

    def __init__(self, kernel):
        self.kernel = kernel
        # what ops' DirectLauncher reads of a kernel (without a GPU it then launches through [grid])
        self.arg_names, self.constexprs = kernel.arg_names, kernel.constexprs

    def __getitem__(self, grid):
        # (Triton's defaults)
        def compile_(*args, num_warps=4, num_stages=3, maxnreg=None, launch_pdl=False, **constexprs):
            gluon = self.kernel.is_gluon()
            if gluon:  # a Gluon kernel declares num_warps among its constexprs
                constexprs["num_warps"] = num_warps
            names = [n for n in self.kernel.arg_names if n not in constexprs]
            sig, attrs = {}, {}
            for i, (name, arg) in enumerate(zip(names, args)):
                sig[name] = mangle_type(arg)
                if isinstance(arg, torch.Tensor) and arg.data_ptr() % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
                elif isinstance(arg, int) and arg % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
            sig.update({k: "constexpr" for k in constexprs})
            source = (GluonASTSource if gluon else ASTSource)(self.kernel, sig, constexprs, attrs)
            ck = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                options=dict(num_warps=num_warps, num_stages=num_stages, maxnreg=maxnreg,
                                             launch_pdl=launch_pdl))
            with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                f.write(ck.asm["cubin"])
            usage = subprocess.run([CUOBJDUMP, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
            regs, stack = re.findall(r"REG:(\d+)", usage), re.findall(r"STACK:(\d+)", usage)
            line = f"regs {regs[0] if regs else '?'} stack {stack[0] if stack else '?'}"
            line += f" smem {ck.metadata.shared}"
            sass = sass_text(ck.asm["cubin"]) if SASS_HISTOGRAM or SASS_DIR else ""
            if SASS_HISTOGRAM:
                line += " " + _sass_histogram(sass)
            if SASS_DIR:
                path = os.path.join(SASS_DIR, f"{_variants_seen - 1:03d}.sass")  # (its index in every shard)
                with open(path, "w") as out:
                    out.write(sass)
                line += f" -> {path}"
            results.append(line)
        return compile_


def _compile(label: str, launch, *args, **kwargs) -> int:
    """One offline compile (``launch(*args, **kwargs)``) and its ok/FAIL line; 1 if it failed
    (nothing, 0, for a variant of another shard)."""
    global _variants_seen
    _variants_seen += 1
    if (_variants_seen - 1) % SHARDS != SHARD:
        return 0
    try:
        launch(*args, **kwargs)
    except Exception as exc:  # report every failing variant, then fail
        # the innermost cause: a Gluon error inside warp_specialize arrives wrapped in compiler
        # errors whose own text ends in the caret under the outer call
        while exc.__cause__ or exc.__context__:
            exc = exc.__cause__ or exc.__context__
        print(f"FAIL  {label}: {type(exc).__name__}: {str(exc).strip()[-300:]}", flush=True)
        return 1
    print(f"ok    {label}: {results[-1]}", flush=True)
    return 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--all-configs", action="store_true", help="every committed tile config, not two")
    p.add_argument("--candidates", action="store_true", help="the configs under evaluation (configs.CANDIDATES)")
    p.add_argument("--gluon", action="store_true", help="only the Gluon configs (CONFIGS and CANDIDATES), where "
                   "they apply: the TMA path, bf16 weights, bf16 and int8 states; every config with AdamW, the "
                   "other rule families on one config per Gluon kernel")
    p.add_argument("--sass", action="store_true", help="also print a static SASS instruction histogram")
    p.add_argument("--epilogue-stages", type=int, default=None,
                   help="compile the configs with this TileConfig.epilogue_stages instead of their own")
    p.add_argument("--dump-sass", metavar="DIR", help="write each variant's SASS into DIR")
    p.add_argument("--shard", default="0/1", metavar="I/N",
                   help="compile only every N-th variant, starting at the I-th (0-based), in a fixed order")
    args = p.parse_args()
    global SASS_HISTOGRAM, SASS_DIR, SHARD, SHARDS
    shard, _, shards = args.shard.partition("/")
    if not (shard.isdigit() and shards.isdigit() and int(shard) < int(shards)):
        p.error(f"--shard {args.shard}: give I/N with 0 <= I < N, e.g. 0/2")
    SHARD, SHARDS = int(shard), int(shards)
    SASS_HISTOGRAM = args.sass
    SASS_DIR = args.dump_sass
    if SASS_DIR:
        os.makedirs(SASS_DIR, exist_ok=True)
    fused_wgrad.fused_wgrad_step_kernel = _OfflineCompile(fused_wgrad.fused_wgrad_step_kernel)
    gluon_wgrad.gluon_ws_fused_step_kernel = _OfflineCompile(gluon_wgrad.gluon_ws_fused_step_kernel)
    gluon_wgrad._sm_count = lambda device_index: 132  # an H100/H200's SMs, without a GPU
    gluon_wgrad._launcher.cache_clear()
    ops._direct_launcher.cache_clear()
    ops.resolve_backend = lambda device, backend=None: "triton"  # CPU tensors stand in for CUDA ones
    ops.interpreter_active = lambda: False
    failures = 0
    rules = ["adamw"] if args.quick else ["adamw", "sgd", "lion", "rmsprop", "adagrad"]
    for tma in (True,) if args.gluon else (True, False):
        ops._tma_eligible = (lambda *a, _t=tma: (_t, _t))
        for rule in rules:
            for codec in ("bf16", "int8", "fp8", "fp32"):
                for store in ("bf16", "bf16_sr", "fp32_master", "fp32"):
                    if args.quick and (codec, store) not in {("bf16", "bf16"), ("int8", "bf16"), ("fp8", "bf16_sr"),
                                                             ("fp32", "fp32_master"), ("bf16", "fp32")}:
                        continue
                    if args.gluon and (codec, store) not in {("bf16", "bf16"), ("int8", "bf16")}:
                        continue
                    wdtype = torch.float32 if store == "fp32" else torch.bfloat16
                    w = torch.zeros(256, 512, dtype=wdtype)
                    state = fm.ForgeParamState.create(w, rule, {}, codec, store)
                    dy = torch.zeros(64, 256, dtype=torch.bfloat16 if wdtype == torch.bfloat16 else torch.float32)
                    x = torch.zeros(64, 512, dtype=dy.dtype)
                    configs = CANDIDATES if args.candidates else CONFIGS if args.all_configs else (
                        CONFIGS[0], CONFIGS[3], CONFIGS[-1])
                    if args.gluon:
                        configs = [c for c in CONFIGS + CANDIDATES if c.kernel != "triton"]
                        if rule != "adamw":  # (the rule's code is the same at every ring depth: one config
                            # per Gluon kernel keeps the CPU suite's compile check under ~3 minutes)
                            configs = [c for i, c in enumerate(configs)
                                       if c.kernel not in {d.kernel for d in configs[:i]}]
                    for cfg in configs:
                        if args.epilogue_stages is not None:
                            cfg = dataclasses.replace(cfg, epilogue_stages=args.epilogue_stages)
                        label = (f"tma={tma} {rule} {codec} {store} {cfg.block_m}x{cfg.block_n}/{cfg.split_n}"
                                 f" e{cfg.epilogue_stages} w{cfg.num_warps} s{cfg.num_stages} {cfg.kernel}")
                        failures += _compile(label, ops.fused_wgrad_step, dy, x, w, state,
                                             state.prepare_step(state.rule.make_group()), backend="triton",
                                             config=cfg)
                        if args.gluon and rule == "adamw" and gluon_wgrad.applies(cfg, state, dy, None, True, True):
                            failures += _compile_gluon_variants(cfg, dy, x, w, state, label)
            if args.gluon:
                continue
            buf = torch.zeros(256, 512)
            failures += _compile(f"tma={tma} accumulate", ops.accumulate_wgrad, torch.zeros(64, 256),
                                 torch.zeros(64, 512), buf, backend="triton", config=CONFIGS[0])
    if args.gluon:
        failures += _compile_gluon_odd_stride()
    else:
        failures += _compile_cross_entropy()
    sys.exit(1 if failures else 0)


def _compile_gluon_variants(cfg, dy, x, w, state, label) -> int:
    """The Gluon config's main-loop-only variant (``ops.wgrad_mainloop``, the benchmark's arm) and
    its traced step (``forge_mcore.bench.timeline``)."""
    sink = torch.zeros(1)
    states = state.slot_tensors
    hyper = state.prepare_step(state.rule.make_group())
    trace = gluon_wgrad.trace_buffer(cfg, *w.shape, w.device)
    failures = 0
    for name, kwargs in (("mainloop", dict(mainloop_only=True)), ("traced", dict(trace=trace))):
        failures += _compile(f"{label} {name}", gluon_wgrad.launch, cfg, dy, x, w, state, states, hyper, sink, sink,
                             None, None, **kwargs)
    return failures


def _compile_gluon_odd_stride() -> int:
    """Each Gluon config's step on a weight whose row stride is a multiple of 8 elements but not of
    16 (TMA still applies; the compiler can no longer assume 16-element alignment of a row, which
    the shapes above all have): code that needs it fails here, not on the GPU."""
    failures = 0
    w = torch.zeros(200, 776, dtype=torch.bfloat16)
    state = fm.ForgeParamState.create(w, "adamw", {}, "bf16", "bf16")
    dy, x = torch.zeros(64, 200, dtype=torch.bfloat16), torch.zeros(64, 776, dtype=torch.bfloat16)
    for cfg in (c for c in CONFIGS + CANDIDATES if c.kernel != "triton"):
        label = f"tma=True adamw bf16 bf16 200x776 {cfg.block_m}x{cfg.block_n} s{cfg.num_stages} {cfg.kernel}"
        failures += _compile(label, ops.fused_wgrad_step, dy, x, w, state, state.prepare_step(state.rule.make_group()),
                             backend="triton", config=cfg)
    return failures


def _compile_cross_entropy() -> int:
    """The blockwise loss's two kernels (``kernels/cross_entropy.py``), bf16 and fp32 logits."""
    failures = 0
    cross_entropy._block_stats_kernel = _OfflineCompile(cross_entropy._block_stats_kernel)
    cross_entropy._block_dlogits_kernel = _OfflineCompile(cross_entropy._block_dlogits_kernel)
    rows, index, values = 8, torch.zeros(8, dtype=torch.long), torch.zeros(8)
    for dtype in (torch.bfloat16, torch.float32):
        logits = torch.zeros(rows, 3000, dtype=dtype)
        calls = (("block_stats", cross_entropy.block_stats, (logits, index, index, 0, values, values, values)),
                 ("block_dlogits_", cross_entropy.block_dlogits_, (logits, values, values, index, index, 0)))
        for name, launcher, args in calls:
            failures += _compile(f"cross_entropy.{name} {dtype}", launcher, *args)
    return failures


if __name__ == "__main__":
    main()
