"""Read bandwidth of L2 and HBM as the SMs see it: the ceiling the fused kernel's slab stream
works against at small BT (docs/kernel_history.md, sessions 11-13).

    python3 scripts/device/l2_bandwidth.py        # device; -> JSON lines and $OUT/l2_bandwidth.json

Each row reads a buffer of ``MiB`` again and again from every SM and sums it (one atomic per
program, so nothing is optimized away), timed as one CUDA-graph replay (``bench.common``):
- ``pointer``: 16-byte vector loads, 8 KB per program and iteration;
- ``tma``: [64, 64] bf16 boxes through a tensor descriptor, the fused kernel's slab shape.
An 8 or 32 MiB buffer stays in the 60 MB L2 (the dY/X slabs of a 4096-wide layer at BT 1024
are 16 MiB); 2 GiB does not. GB/s = bytes read / time.
"""

from __future__ import annotations

import json
import os

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from forge_mcore.bench.common import environment, time_graph

BLOCK = 4096  # bf16 elements per pointer load step: 8 KB
BOX = 64


@triton.jit
def _read_pointer(src, out, chunks, iters, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in range(iters):
        for c in range(tl.program_id(0), chunks, tl.num_programs(0)):
            acc += tl.load(src + c * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
    tl.atomic_add(out, tl.sum(acc), sem="relaxed")


@triton.jit
def _read_tma(desc, out, rows, cols, iters, BOX: tl.constexpr):
    acc = tl.zeros([BOX, BOX], tl.float32)
    boxes_per_row = cols // BOX
    for _ in range(iters):
        for b in range(tl.program_id(0), (rows // BOX) * boxes_per_row, tl.num_programs(0)):
            acc += desc.load([(b // boxes_per_row) * BOX, (b % boxes_per_row) * BOX]).to(tl.float32)
    tl.atomic_add(out, tl.sum(acc), sem="relaxed")


def measure(kind: str, mib: int, programs: int) -> dict:
    elems = mib * 2**20 // 2
    src = torch.ones(elems, device="cuda", dtype=torch.bfloat16)
    out = torch.zeros(1, device="cuda")
    iters = max(1, (4 * 2**30) // (mib * 2**20))  # ~4 GiB read per launch
    if kind == "pointer":
        def launch():
            _read_pointer[(programs,)](src, out, elems // BLOCK, iters, BLOCK=BLOCK, num_warps=4)
    else:
        cols = 4096
        rows = elems // cols
        desc = TensorDescriptor.from_tensor(src.view(rows, cols), [BOX, BOX])

        def launch():
            _read_tma[(programs,)](desc, out, rows, cols, iters, BOX=BOX, num_warps=4)
    launch()
    torch.cuda.synchronize()
    expected = float(elems) * iters  # every element read once per iteration, each 1.0
    ms = time_graph(launch, reps=10, warmup=1)
    out.zero_()
    launch()
    torch.cuda.synchronize()
    return dict(kind=kind, mib=mib, programs=programs, iters=iters, ms=ms,
                gbps=elems * 2 * iters / (ms * 1e-3) / 1e9, sum_ok=abs(out.item() - expected) <= 1e-3 * expected)


def main() -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for kind in ("pointer", "tma"):
        for mib in (8, 32, 2048):
            for per_sm in (2, 4, 8):
                rows.append(measure(kind, mib, per_sm * sms))
                print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "l2_bandwidth.json"), "w") as f:
        json.dump(dict(environment=environment(), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
