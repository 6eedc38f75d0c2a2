"""Instruction issue rate against a loop body's code size: is there a cliff where the body
outgrows an instruction cache (docs/kernel_history.md, session 31)?

    python3 scripts/device/icache_probe.py      # device; -> JSON lines and $OUT/icache_probe.{json,csv,png}

The int8 rule's loop is ~1,100 SASS instructions (17.8 KB) per consumer and stalls on instruction
fetch (session 14: 40-62% of its samples), the bf16 rule's (~800, 12.8 KB) hardly at all. Here one
program per SM (``warps`` warps: one or two per scheduler) runs a runtime loop whose body is ``N``
independent fma's (eight chains, so each warp can issue one per cycle) for every N of ``SIZES``;
the rate is N x iterations x warps / (time x SMs x 4 schedulers), instructions per ns per
scheduler. A cliff between two sizes says where fetch starts to bound a loop of this width.
"""

from __future__ import annotations

import functools
import json
import os

import torch
import triton
import triton.language as tl

from forge_mcore.bench.common import time_graph, write_csv, write_json

SIZES = [256, 512, 640, 768, 896, 960, 1024, 1088, 1152, 1280, 1536, 2048, 3072]
ITERS = 2000


@triton.jit
def _fma_loop(x_ptr, out_ptr, iters, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    c0, c1, c2, c3, c4, c5, c6, c7 = a, a + 1.0, a + 2.0, a + 3.0, a + 4.0, a + 5.0, a + 6.0, a + 7.0
    for _ in range(iters):
        for i in tl.static_range(N // 8):  # (a multiplier per step: nothing for the compiler to fold)
            m = 1.0 + i * 1e-7
            c0 = c0 * m + 0.25
            c1 = c1 * m + 0.25
            c2 = c2 * m + 0.25
            c3 = c3 * m + 0.25
            c4 = c4 * m + 0.25
            c5 = c5 * m + 0.25
            c6 = c6 * m + 0.25
            c7 = c7 * m + 0.25
    tl.store(out_ptr + tl.program_id(0) * BLOCK + offs, c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7)


def main() -> None:
    out = os.environ.get("OUT", ".")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for warps in (4, 8):
        block = 32 * warps
        x = torch.rand(block, device="cuda")
        y = torch.empty(sms * block, device="cuda")
        for n in SIZES:
            launch = functools.partial(_fma_loop[(sms,)], x, y, ITERS, N=n, BLOCK=block, num_warps=warps)
            launch()
            ms = time_graph([launch], reps=10)
            rate = n * ITERS * warps / (ms * 1e6 * 4)  # per scheduler and ns (warps spread over 4)
            rows.append(dict(warps=warps, fmas=n, body_kb=16 * n / 1024, ms=ms, instr_per_ns_per_scheduler=rate))
            print(json.dumps(rows[-1]), flush=True)
    write_json(os.path.join(out, "icache_probe.json"), rows)
    write_csv(os.path.join(out, "icache_probe.csv"), rows)


if __name__ == "__main__":
    main()
