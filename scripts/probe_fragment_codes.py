"""Compile-only probe: can the Gluon kernel read and write int8 codes 16 bytes at a time per thread, if the
codes are stored permuted within each 64-column block ("fragment order")? (Session 32 asked; since session 33
the kernel stores them so: ``codecs/blockwise.py``, ``gluon_wgrad._fragment_layout``, which this probe uses.)

    python scripts/probe_fragment_codes.py

The wgmma accumulator layout of a [64, 64] tile over four warps gives thread t of warp w the rows
16w + t/4 (+8) and the columns 8j + 2(t%4) + e (j < 8, e < 2): two adjacent codes per 8-column group, so
today's kernel reads codes two at a time (LDS.U16). Stored at position 16(t%4) + 2j + e instead, a thread's 16
codes of a row are contiguous. The probe loads a [64, 64] uint8 tile (TMA into the NVMMA-swizzled buffer the
kernel uses) in a linear layout of 16 contiguous bytes per thread and row, relabels it to logical columns
by reshape/permute (no data movement), converts it to the wgmma layout (only registers renamed, if the
relabelling is right), adds 1, and stores it back the same way. It prints the SASS of both variants' shared
memory accesses and what else moves data (SHFL, BAR), for the plain (MMA-layout) load and the fragment one.
No GPU is needed."""

from __future__ import annotations

import collections
import os
import re
import sys

import torch
import triton
from compile_check import sass_text  # (scripts/ is on the path: this runs as a script)
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from forge_mcore.codecs.blockwise import fragment_to_logical, logical_to_fragment  # noqa: E402
from forge_mcore.kernels.gluon_wgrad import _fragment_layout, _mma_layout  # noqa: E402


@gluon.jit
def codes_probe(c_desc, out_desc, STORED_L: gl.constexpr, MMA_L: gl.constexpr, FRAGMENT: gl.constexpr,
                num_warps: gl.constexpr):
    smem = gl.allocate_shared_memory(c_desc.dtype, [64, 64], c_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, c_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(c_desc, [0, 0], bar, smem)
    mbarrier.wait(bar, 0)
    if FRAGMENT:
        stored = smem.load(STORED_L)  # position p = 16a + 2j + e holds logical column 8j + 2a + e
        codes = gl.convert_layout(fragment_to_logical(stored), MMA_L)
    else:
        codes = smem.load(MMA_L)
    codes = codes + 1
    if FRAGMENT:
        smem.store(gl.convert_layout(logical_to_fragment(codes), STORED_L))
    else:
        smem.store(codes)
    fence_async_shared()
    tma.async_copy_shared_to_global(out_desc, [0, 0], smem)
    tma.store_wait(0)
    mbarrier.invalidate(bar)


def compile_probe(fragment: bool):
    x = torch.empty(64, 64, dtype=torch.uint8)
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.uint8)
    desc = TensorDescriptor.from_tensor(x, [64, 64], layout)
    mma = _mma_layout(64, 64, 4)
    stored = _fragment_layout(mma)
    constexprs = dict(STORED_L=stored, MMA_L=mma, FRAGMENT=fragment, num_warps=4)
    sig = {"c_desc": mangle_type(desc), "out_desc": mangle_type(desc), **{k: "constexpr" for k in constexprs}}
    src = GluonASTSource(codes_probe, sig, constexprs, {})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4))


for fragment in (False, True):
    sass = sass_text(compile_probe(fragment).asm["cubin"])
    ops = collections.Counter(re.findall(r"\b((?:LDS|STS|SHFL|BAR|LDSM|STSM)[.\w]*|PRMT)\b", sass))
    print(("fragment order" if fragment else "wgmma layout  "), dict(sorted(ops.items())))
