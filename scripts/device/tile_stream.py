"""How fast a weight and its state stream through the SMs in tiles, against a copy of the same bytes.

At BT 64 the fused step at 1024 x 4096 is almost all tile traffic (its main loop alone is a
quarter of it): session 42 timed it at 77% of the copy ceiling on an H100. This script asks
whether that is the tile pattern's (64 rows of 256 B per tile, each row 8 KB from the next) or
the fused kernel's (one program per SM, its tile buffers the only bytes in flight):

- ``copy``, ``neg``: torch's copy and an elementwise SM kernel moving the same bytes;
- ``rmw BMxBN gG``: a plain Triton kernel, one program per BM x BN tile of the weight and one
  bf16 state (an SGD-momentum-like update from a stand-in gradient), tiles in grouped order G;
- ``step BT``: the fused SGD-m step with its committed config at BT 16 and 64.

Each arm is a CUDA graph over rotating buffer sets (twice the L2), arms interleaved rep by rep.

    python3 scripts/device/tile_stream.py     # device; env SHAPE (1024x4096), REPS
    -> a line per arm (us per call, GB/s, fraction of the copy ceiling) and $OUT/tile_stream.csv
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

import forge_mcore as fm
from forge_mcore.bench.common import measure_ceilings, rotation_count, time_graphs, write_csv
from forge_mcore.bench.kernel import ForgeArm
from forge_mcore.kernels.fused_wgrad import _tile_ids


@triton.jit
def _rmw_tiles(w_ptr, m_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GROUP_M)  # the fused kernel's tile order
    offs = (pm * BM + tl.arange(0, BM))[:, None] * N + (pn * BN + tl.arange(0, BN))[None, :]
    w = tl.load(w_ptr + offs).to(tl.float32)
    m = 0.9 * tl.load(m_ptr + offs).to(tl.float32) + 1e-3 * w  # a stand-in gradient
    tl.store(m_ptr + offs, m.to(tl.bfloat16))
    tl.store(w_ptr + offs, (w - 1e-4 * m).to(tl.bfloat16))


def main() -> None:
    os.environ.setdefault("FORGE_AUTOTUNE", "0")
    out = os.environ.get("OUT", ".")
    reps = int(os.environ.get("REPS", 30))
    M, N = map(int, os.environ.get("SHAPE", "1024x4096").split("x"))
    ceiling = measure_ceilings().copy_gbps
    tile_bytes = 2 * 2 * M * N * 2  # the weight and one bf16 state, read and written
    sets = rotation_count(tile_bytes)
    weights = [torch.randn(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    moments = [torch.zeros_like(w) for w in weights]
    flat = [torch.randn(2 * M * N, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    flat_out = [torch.empty_like(f) for f in flat]
    arms: dict[str, list] = {
        "copy": [lambda s=s, d=d: d.copy_(s) for s, d in zip(flat, flat_out)],
        "neg": [lambda s=s, d=d: torch.neg(s, out=d) for s, d in zip(flat, flat_out)],
    }
    step_bytes = {}  # the fused steps also read dY and X; every other arm moves tile_bytes
    for bm, bn in ((64, 128), (64, 64), (128, 128), (32, 256), (16, 512), (8, 1024)):
        for group in (8, 1):
            name = f"rmw {bm}x{bn} g{group}"
            arms[name] = [lambda w=w, m=m, bm=bm, bn=bn, g=group: _rmw_tiles[((M // bm) * (N // bn),)](
                w, m, M, N, BM=bm, BN=bn, GROUP_M=g, num_warps=4) for w, m in zip(weights, moments)]
    for bt in (16, 64):
        forge = ForgeArm.build(f"{M}x{N}", bt, "sgdm-bf16")
        tel = fm.StepTelemetry.zeros("cuda")
        steps = forge.steps(tel)
        steps[0]()  # the committed winner, picked outside any graph
        arms[f"step BT {bt}"] = steps
        step_bytes[f"step BT {bt}"] = forge.bytes_moved
    ms = time_graphs(arms, reps=reps)
    rows = []
    print(f"copy ceiling {ceiling:.0f} GB/s; {M}x{N}, {sets} rotation sets", flush=True)
    for name, t in ms.items():
        moved = step_bytes.get(name, tile_bytes)
        gbps = moved / (t * 1e-3) / 1e9
        rows.append(dict(arm=name, us_per_call=1000 * t, bytes=moved, gbps=gbps, of_ceiling=gbps / ceiling))
        print(f"{name:>18}: {1000 * t:7.2f} us  {gbps:6.0f} GB/s  {gbps / ceiling:.3f} of the copy ceiling",
              flush=True)
    write_csv(os.path.join(out, "tile_stream.csv"), rows)


if __name__ == "__main__":
    main()
