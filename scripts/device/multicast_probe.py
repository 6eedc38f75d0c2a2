"""Would TMA multicast across a 2-CTA cluster shorten the wgrad main loop? A probe, Triton >= 3.9.

Gluon 3.6 has no CTA clusters; 3.7 has them (``num_ctas``, ``cga_layout``, ``multicast=True``) but
lowers a cross-CTA mbarrier to CTA-local ones; 3.9 keeps the cluster's barriers.
This times one small pipelined kernel twice, the same code compiled for one CTA per program and
for a 2-CTA cluster whose CTAs take vertically adjacent 64 x 128 tiles and receive the X slab they
share by one multicast (each CTA then pulls 16 KB of slabs from L2 per k-step instead of 24):

    dW tile = dY[:, rows].T @ X[:, cols]   (K = BT, a four-deep ring, one m64n128 wgmma per k16)
    epilogue 0: each row's sum into a small buffer (the main loop alone; checked against torch)
    epilogue 3: a mock AdamW on bf16 w, m, v by pointer loads and stores (12 B per parameter of
                HBM traffic beside the other CTAs' main loops, as in the fused step)

against cuBLAS's ``dY.t() @ X`` on the same shapes, in one process. Not the fused kernel: a probe
of the lever (``results/2026-12-02/session19/next/README.md``: the BT <= 1024 cells are bound by
the slab stream beside the epilogue's HBM stream).

    # device, Triton 3.9 carried by scripts/device/triton_parts.py (results/2026-12-02/session20/call3.sh):
    PYTHONPATH=.triton_parts/3.9.0/site:$PYTHONPATH TRITON_BACKENDS_IN_TREE=1 \
      TRITON_PTXAS_BLACKWELL_PATH=.triton_parts/3.9.0/site/triton/backends/nvidia/bin/ptxas \
      python3 scripts/device/multicast_probe.py --out $OUT/probe
    python scripts/device/multicast_probe.py --compile-only     # here, with a Triton >= 3.9 on PYTHONPATH
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import json
import os

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

# Triton 3.9 renamed the TMA load (3.7: async_copy_global_to_shared)
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
ROWS, COLS, BLOCK_K, STAGES = (gl.constexpr(n) for n in (64, 128, 64, 4))


@gluon.constexpr_function
def _acc_layout(cluster):
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, COLS, 16],
                                     cga_layout=[[1, 0]] if cluster == 2 else [])


@gluon.jit
def _issue(dy_desc, x_desc, a_ring, b_ring, ready, s, k, om, on, MULTICAST: gl.constexpr):
    mbarrier.expect(ready.index(s), dy_desc.nbytes_per_cta + x_desc.nbytes_per_cta)
    _tma_load(dy_desc, [k * BLOCK_K, om], ready.index(s), a_ring.index(s))
    _tma_load(x_desc, [k * BLOCK_K, on], ready.index(s), b_ring.index(s), multicast=MULTICAST)


@gluon.jit
def probe_kernel(dy_desc, x_desc, w_ptr, m_ptr, v_ptr, out_ptr, M, N, K, CLUSTER: gl.constexpr,
                 EPILOGUE: gl.constexpr):
    BM: gl.constexpr = dy_desc.block_shape[1]  # the cluster's rows (CLUSTER x ROWS)
    pid = gl.program_id(0)  # the cluster's
    num_n = gl.cdiv(N, COLS)
    om = (pid // num_n) * BM
    on = (pid % num_n) * COLS
    a_ring = gl.allocate_shared_memory(dy_desc.dtype, [STAGES] + dy_desc.block_shape, dy_desc.layout)
    b_ring = gl.allocate_shared_memory(x_desc.dtype, [STAGES] + x_desc.block_shape, x_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)  # each CTA its own
    # a stage is refilled once every CTA of the cluster has read it: one barrier for the cluster
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout(cga_layout=[[0]] * (CLUSTER // 2)))
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    num_k = gl.cdiv(K, BLOCK_K)
    for i in gl.static_range(STAGES - 1):
        if i < num_k:
            _issue(dy_desc, x_desc, a_ring, b_ring, ready, i, i, om, on, CLUSTER > 1)
    layout: gl.constexpr = _acc_layout(CLUSTER)
    acc = gl.zeros([BM, COLS], gl.float32, layout)
    for k in range(num_k):
        s = k % STAGES
        mbarrier.wait(ready.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_ring.index(s).permute((1, 0)), b_ring.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
        prev = (k + STAGES - 1) % STAGES  # step k - 1's stage: read by this CTA
        mbarrier.arrive(empty.index(prev), pred=k > 0)
        nxt = k + STAGES - 1
        if nxt < num_k:
            mbarrier.wait(empty.index(prev), ((k - 1) // STAGES) & 1, pred=k > 0)
            _issue(dy_desc, x_desc, a_ring, b_ring, ready, prev, nxt, om, on, CLUSTER > 1)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    rows = om + gl.arange(0, BM, layout=gl.SliceLayout(1, layout))
    if EPILOGUE == 0:
        gl.store(out_ptr + (pid % num_n) * M + rows, gl.sum(acc, axis=1), mask=rows < M)
    else:
        cols = on + gl.arange(0, COLS, layout=gl.SliceLayout(0, layout))
        at = rows.to(gl.int64)[:, None] * N + cols[None, :]
        inside = (rows < M)[:, None] & (cols < N)[None, :]
        w = gl.load(w_ptr + at, mask=inside).to(gl.float32)
        m = gl.load(m_ptr + at, mask=inside).to(gl.float32)
        v = gl.load(v_ptr + at, mask=inside).to(gl.float32)
        m = 0.9 * m + 0.1 * acc
        v = 0.999 * v + 0.001 * acc * acc
        w = w * 0.9999 - 1e-3 * m / (gl.sqrt(v) + 1e-8)
        gl.store(w_ptr + at, w.to(gl.bfloat16), mask=inside)
        gl.store(m_ptr + at, m.to(gl.bfloat16), mask=inside)
        gl.store(v_ptr + at, v.to(gl.bfloat16), mask=inside)


def _descs(dy: torch.Tensor, x: torch.Tensor, cluster: int):
    dy_block, x_block = [BLOCK_K.value, cluster * ROWS.value], [BLOCK_K.value, COLS.value]
    dy_layout = gl.NVMMASharedLayout.get_default_for(dy_block, gl.bfloat16,
                                                     cga_layout=[[0, 1]] if cluster == 2 else None)
    x_layout = gl.NVMMASharedLayout.get_default_for(x_block, gl.bfloat16,
                                                    cga_layout=[[0, 0]] if cluster == 2 else None)
    return TensorDescriptor.from_tensor(dy, dy_block, dy_layout), TensorDescriptor.from_tensor(x, x_block, x_layout)


def launch(dy, x, w, m, v, out, cluster: int, epilogue: int) -> None:
    M, N, K = dy.shape[1], x.shape[1], dy.shape[0]
    grid = (triton.cdiv(M, cluster * ROWS) * triton.cdiv(N, COLS),)
    probe_kernel[grid](*_descs(dy, x, cluster), w, m, v, out, M, N, K, cluster, epilogue, num_warps=4,
                       num_ctas=cluster)


def _launch_next(dy, x, sets, out, cluster: int, epilogue: int) -> None:
    """``launch`` on the next weight/state set of the cycle (each replay finds its set past L2)."""
    launch(dy, x, *next(sets), out, cluster, epilogue)


def _compile_only() -> None:
    """Each variant compiled for sm_90a without a GPU: its shared memory and the PTX lines that
    show who issues the multicast and how the cluster's barriers are kept."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    for cluster in (1, 2):
        for epilogue in (0, 3):
            dy = torch.empty(512, 1024, dtype=torch.bfloat16)
            x = torch.empty(512, 4096, dtype=torch.bfloat16)
            d_dy, d_x = _descs(dy, x, cluster)
            args = [d_dy, d_x, None, None, None, None, 1024, 4096, 512]
            names = probe_kernel.arg_names
            signature = {n: mangle_type(a) if a is not None else "*bf16" for n, a in zip(names, args)}
            signature["out_ptr"] = "*fp32"
            signature.update(CLUSTER="constexpr", EPILOGUE="constexpr")
            src = GluonASTSource(probe_kernel, signature, constexprs={"CLUSTER": cluster, "EPILOGUE": epilogue})
            k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_ctas": cluster})
            ptx = k.asm["ptx"]
            cluster_lines = [ln.strip() for ln in ptx.splitlines() if not ln.strip().startswith(".loc")
                         and any(w in ln for w in ("cp.async.bulk", "mbarrier", "mapa", "cluster", "elect"))]
            print(f"cluster {cluster} epilogue {epilogue}: smem {k.metadata.shared}")
            for ln in cluster_lines[:40]:
                print("   ", ln)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out")
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("--shapes", default="4096x4096,1024x4096,12288x4096")
    p.add_argument("--bts", default="512,1024,4096")
    p.add_argument("--reps", type=int, default=50)
    a = p.parse_args()
    if a.compile_only:
        _compile_only()
        return
    os.makedirs(a.out, exist_ok=True)
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    for shape in a.shapes.split(","):
        M, N = map(int, shape.split("x"))
        for bt in map(int, a.bts.split(",")):
            dy = torch.randn(bt, M, device="cuda", dtype=torch.bfloat16, generator=gen)
            x = torch.randn(bt, N, device="cuda", dtype=torch.bfloat16, generator=gen)
            ref = (dy.t().float() @ x.float()).sum(1)
            sets = [[torch.randn(M, N, device="cuda", dtype=torch.bfloat16, generator=gen) * 0.01 for _ in range(3)]
                    for _ in range(4)]  # 4 x 3 x 2 B x M x N: past L2 from 1024 x 4096 up
            out = torch.zeros(triton.cdiv(N, COLS), M, device="cuda")
            row = {"shape": shape, "bt": bt}
            for cluster in (1, 2):
                out.zero_()
                launch(dy, x, *sets[0], out, cluster, 0)
                torch.cuda.synchronize()
                err = ((out.sum(0) - ref).abs().max() / ref.abs().max()).item()
                row[f"c{cluster}_rel_err"] = err
                for epilogue in (0, 3):
                    step = functools.partial(_launch_next, dy, x, itertools.cycle(sets), out, cluster, epilogue)
                    # in a graph: the host's launch cost is not timed (it was, at small cells, in call 2)
                    row[f"c{cluster}_e{epilogue}_us"] = 1e3 * triton.testing.do_bench_cudagraph(step, rep=a.reps)
            row["cublas_us"] = 1e3 * triton.testing.do_bench_cudagraph(functools.partial(torch.matmul, dy.t(), x),
                                                                       rep=a.reps)
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(os.path.join(a.out, "probe.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
