"""Compile-only probe: can Gluon (Triton 3.6) multicast one TMA load across a 2-CTA cluster on sm_90a?

    python scripts/probe_multicast.py          # add -v to dump the TMA/barrier PTX lines of each attempt

Each attempt compiles a tiny Gluon kernel for GPUTarget("cuda", 90) with num_ctas=2 and reports whether
it compiled and what the PTX holds: multicast::cluster TMA, mapa, shared::cluster mbarrier arrives,
barrier.cluster. No GPU is needed (CPU torch tensors stand in for the descriptor bases).
"""

from __future__ import annotations

import re
import sys
import tempfile

import torch
import triton
from compile_check import sass_text  # (scripts/ is on the path: this runs as a script)
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma, warpgroup_mma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

VERBOSE = "-v" in sys.argv
BOX = 64  # the [64, 64] bf16 box each CTA should receive


@gluon.jit
def tma_probe(x_desc, w_desc, out_ptr, BAR_L: gl.constexpr, REG_L: gl.constexpr, DO_MMA: gl.constexpr,
              num_warps: gl.constexpr):
    # the whole-cluster ("CGA") block; with a broadcast cga_layout every CTA holds all of it
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BN: gl.constexpr = x_desc.block_type.shape[1]
    smem = gl.allocate_shared_memory(x_desc.dtype, [BM, BN], x_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], BAR_L)
    mbarrier.init(bar, count=1)
    fence_async_shared(cluster=True)  # make the barrier init visible to the cluster's async proxy
    w_smem = gl.allocate_shared_memory(w_desc.dtype, w_desc.block_type.shape, w_desc.layout)
    mbarrier.expect(bar, x_desc.block_type.nbytes + DO_MMA * w_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(x_desc, [0, 0], bar, smem)  # ONE load; multicast if the lowering chooses it
    if DO_MMA:
        tma.async_copy_global_to_shared(w_desc, [0, 0], bar, w_smem)  # broadcast [64,64] B operand
    mbarrier.wait(bar, 0)
    if DO_MMA:  # [BM,64] @ [64,64] with wgmma straight from the TMA-written buffers (REG_L: the wgmma acc)
        acc = warpgroup_mma(smem, w_smem.permute((1, 0)), gl.zeros([BM, BN], gl.float32, REG_L))
        val = acc.to(gl.bfloat16)
    else:
        val = smem.load(REG_L)
    rows = gl.arange(0, BM, gl.SliceLayout(1, REG_L))
    cols = gl.arange(0, BN, gl.SliceLayout(0, REG_L))
    gl.store(out_ptr + rows[:, None] * BN + cols[None, :], val)
    mbarrier.invalidate(bar)


# (g) the fallback: Gluon allocates smem/barrier, inline PTX does the cluster parts. Gluon 3.6 cannot hand a
# memdesc's address or the descriptor's address to inline asm, so the asm names Triton's own PTX symbols:
# `global_smem` (+ the allocation offsets the compiler picked, checked after compiling) and the kernel's
# descriptor parameter `tma_probe_asm_param_0`.
_CLUSTER_ASM = """{
 .reg .b32 rk, other, tid, buf, bar, peer; .reg .b64 d; .reg .pred lead;  // lead: thread 0 (of CTA 0 for the TMA)
 mov.u32 tid, %tid.x; mov.u32 rk, %cluster_ctarank;
 mov.b32 buf, global_smem; add.s32 bar, buf, BAR_OFF; add.s32 buf, buf, BUF_OFF;
 barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;
 setp.eq.u32 lead, tid, 0;
 sub.u32 other, 1, rk;
 @lead mapa.shared::cluster.u32 peer, bar, other;  // the other CTA's barrier, same smem offset
 @lead mbarrier.arrive.release.cluster.shared::cluster.b64 _, [peer];
 setp.eq.and.u32 lead, rk, 0, lead;
 mov.b64 d, tma_probe_asm_param_0; cvta.param.u64 d, d;
 @lead cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
   [buf], [d, {$1, $1}], [bar], 3;  // ctaMask 0b11: one load lands in both CTAs, completes on both barriers
 mov.u32 $0, rk;
}"""


@gluon.jit
def tma_probe_asm(x_desc, out_ptr, ASM: gl.constexpr, one_l: gl.constexpr, full_l: gl.constexpr,
                  num_warps: gl.constexpr):
    # layouts with a cga_layout come from the host: built in-kernel, 3.6 fails comparing them ('list' ... 'type')
    smem = gl.allocate_shared_memory(x_desc.dtype, [64, 64], x_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], gl.SwizzledSharedLayout(1, 1, 1, [0], cga_layout=[[0]]))
    # count 2: the local expect_tx arrive + the peer CTA's remote arrive (stands in for "slot free")
    mbarrier.init(bar, count=2)
    mbarrier.expect(bar, x_desc.block_type.nbytes)
    fence_async_shared(cluster=True)
    zero = gl.zeros([32 * num_warps], gl.int32, one_l)
    rank = gl.inline_asm_elementwise(ASM, "=r,r", [zero], dtype=gl.int32, is_pure=False, pack=1)
    mbarrier.wait(bar, 0, deps=[smem])
    val = smem.load(full_l)
    rows = gl.arange(0, 64, gl.SliceLayout(1, full_l))
    cols = gl.arange(0, 64, gl.SliceLayout(0, full_l))
    gl.store(out_ptr + rows[:, None] * 64 + cols[None, :], val)
    gl.store(out_ptr + 64 * 64 + gl.arange(0, 32 * num_warps, one_l), rank.to(gl.bfloat16))


def compile_asm_probe(buf_off=0, bar_off=8192):
    x = torch.empty(256, 256, dtype=torch.bfloat16)
    layout = gl.NVMMASharedLayout.get_default_for([BOX, BOX], gl.bfloat16, cga_layout=[[0, 0]])
    desc = TensorDescriptor.from_tensor(x, [BOX, BOX], layout)
    asm = _CLUSTER_ASM.replace("BUF_OFF", str(buf_off)).replace("BAR_OFF", str(bar_off))
    constexprs = dict(ASM=asm, one_l=gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[0]]),
                      full_l=gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=[[0, 0]]), num_warps=4)
    sig = {"x_desc": mangle_type(desc), "out_ptr": "*bf16", **{k: "constexpr" for k in constexprs}}
    src = GluonASTSource(tma_probe_asm, sig, constexprs, {(1,): [["tt.divisibility", 16]]})
    ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, num_ctas=2))
    # the offsets the compiler actually chose for the two allocations must equal the ones baked into the asm
    offs = sorted(set(int(o) for o in re.findall(r"@global_smem, i32 (\d+)\)", ck.asm["llir"])))
    assert bar_off in offs, f"barrier not at {bar_off}: llir offsets {offs}"
    return ck


def compile_ttgir_probe():
    """(h) below Gluon: (a)'s TTGIR with the {multicast = true} attribute newer upstream Triton puts on the TMA op,
    plus ttng.cluster_arrive/cluster_wait (in 3.6's IR, not exposed in 3.6's Gluon), compiled as a .ttgir file."""
    ttgir = compile_probe(block=[BOX, BOX], smem_cga=[[0, 0]], bar_cga=[[0]], reg_cga=[[0, 0]]).asm["ttgir"]
    ttgir = ttgir.replace(", %true : !tt.tensordesc", ", %true {multicast = true} : !tt.tensordesc", 1)
    ttgir = ttgir.replace("ttng.fence_async_shared {bCluster = true}", "ttng.fence_async_shared {bCluster = true} "
                          "loc(#loc)\n    ttng.cluster_arrive {relaxed = false} loc(#loc)\n    ttng.cluster_wait", 1)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir") as f:
        f.write(ttgir)
        f.flush()
        return triton.compile(f.name, target=GPUTarget("cuda", 90, 32))


def compile_probe(block, smem_cga, bar_cga, reg_cga, do_mma=False, num_ctas=2):
    x = torch.empty(256, 256, dtype=torch.bfloat16)
    layout = gl.NVMMASharedLayout.get_default_for(block, gl.bfloat16, cga_layout=smem_cga or None)
    desc = TensorDescriptor.from_tensor(x, block, layout)
    w_desc = TensorDescriptor.from_tensor(x, [BOX, BOX], gl.NVMMASharedLayout.get_default_for(
        [BOX, BOX], gl.bfloat16, cga_layout=[[0, 0]]))
    out = torch.empty(block[0], block[1], dtype=torch.bfloat16)
    if do_mma:  # accumulator layout of [BM, 64] = A[BM, 64] @ B[64, 64]
        reg_l = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BOX, 16],
                                          cga_layout=reg_cga)
    else:
        reg_l = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=reg_cga)
    constexprs = dict(BAR_L=mbarrier.MBarrierLayout(cga_layout=bar_cga), REG_L=reg_l, DO_MMA=do_mma, num_warps=4)
    sig = {"x_desc": mangle_type(desc), "w_desc": mangle_type(w_desc), "out_ptr": mangle_type(out),
           **{k: "constexpr" for k in constexprs}}
    src = GluonASTSource(tma_probe, sig, constexprs, {(2,): [["tt.divisibility", 16]]})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, num_ctas=num_ctas))


PATTERNS = {  # what to look for in the PTX
    "tma_multicast": r"cp\.async\.bulk\.tensor\.[^\n]*multicast::cluster",
    "tma_any": r"cp\.async\.bulk\.tensor\.\dd\.",
    "mapa": r"\bmapa\.",
    "mbar_arrive_cluster": r"mbarrier\.arrive[^\n]*shared::cluster",
    "barrier.cluster": r"barrier\.cluster\.",
    "cluster_ctarank": r"%cluster_ctarank",
}


def report(label, fn=None, **kw):
    try:
        ck = (fn or compile_probe)(**kw)
    except Exception as exc:  # the innermost cause, first lines
        while exc.__cause__ or exc.__context__:
            exc = exc.__cause__ or exc.__context__
        msg = "\n      ".join(str(exc).strip().splitlines()[-6:])
        print(f"FAIL  {label}\n      {type(exc).__name__}: {msg}")
        return
    ptx = ck.asm["ptx"]
    md = ck.metadata
    hits = {k: len(re.findall(p, ptx)) for k, p in PATTERNS.items()}
    cluster = getattr(md, "cluster_dims", None)
    cluster = (cluster, ".reqnctapercluster " + (re.findall(r"\.reqnctapercluster (\S+)", ptx) or ["-"])[0])
    print(f"ok    {label}\n      num_ctas={md.num_ctas} cluster_dims={cluster} smem={md.shared} " +
          " ".join(f"{k}={v}" for k, v in hits.items()))
    sass = sass_text(ck.asm["cubin"])  # the TMA loads the hardware will run
    print("      sass:", sorted(set(re.findall(r"UTMALDG[.\w]*|UBLKCP[.\w]*", sass))))
    for line in ptx.splitlines():
        if re.search(r"cp\.async\.bulk\.tensor|mapa|shared::cluster\.b64|mbarrier\.(arrive|try_wait|init)"
                     r"|barrier\.cluster|wgmma\.mma", line):
            if VERBOSE or "multicast" in line or "mapa" in line:
                print("        |", line.strip())


if __name__ == "__main__":
    print(f"triton {triton.__version__}, target sm_90a, num_ctas=2, box [{BOX},{BOX}] bf16")
    # (a) broadcast: the [64,64] block is replicated in both CTAs (cga basis [0,0] = CTA bit maps to no offset)
    report("(a) broadcast smem cga=[[0,0]], block [64,64]",
           block=[BOX, BOX], smem_cga=[[0, 0]], bar_cga=[[0]], reg_cga=[[0, 0]])
    # (b) split: a [128,64] CGA block, each CTA holds its own [64,64] half (no sharing, so no multicast expected)
    report("(b) split smem cga=[[1,0]], block [128,64]",
           block=[2 * BOX, BOX], smem_cga=[[1, 0]], bar_cga=[[0]], reg_cga=[[1, 0]])
    # (c) no cga_layout at all under num_ctas=2 (the default CTA layout)
    report("(c) no cga_layout, block [64,64]", block=[BOX, BOX], smem_cga=[], bar_cga=[], reg_cga=[])
    # (d) broadcast buffer consumed by warpgroup_mma
    report("(d) broadcast smem + warpgroup_mma",
           block=[BOX, BOX], smem_cga=[[0, 0]], bar_cga=[[0]], reg_cga=[[0, 0]], do_mma=True)
    # (e) split buffer consumed by warpgroup_mma
    report("(e) split smem [128,64] + warpgroup_mma",
           block=[2 * BOX, BOX], smem_cga=[[1, 0]], bar_cga=[[0]], reg_cga=[[1, 0]], do_mma=True)
    # (g) hand-written PTX for the cluster parts (multicast TMA, mapa + remote arrive, cluster barrier)
    report("(g) Gluon buffers + inline_asm_elementwise PTX multicast", fn=compile_asm_probe)
    # (h) TTGIR route: does 3.6's lowering honour a {multicast = true} attribute? (it parses; is it used?)
    report("(h) TTGIR file: async_tma_copy {multicast = true} + ttng.cluster_arrive/wait", fn=compile_ttgir_probe)
