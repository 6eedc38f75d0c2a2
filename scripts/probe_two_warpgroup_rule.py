"""Compile-only probe: can a Gluon (Triton 3.6) consumer of two warpgroups rule a 64 x 128 unit's two
column halves at once without moving the accumulator through shared memory (docs/kernel.md "After
session 31")?

    python scripts/probe_two_warpgroup_rule.py        # add -v to print each variant's SASS histogram

One kernel of eight warps: an m64n128 wgmma over the warps [4, 2] (each warpgroup an m64n64 column
half), the accumulator viewed as [64, 2, 64] (row, column half, column), a per-row absmax of each
half and a code per element, with both halves' int8 codes read and written through one [64, 2, 64]
shared buffer (a 3-D TMA box over the codes viewed as rows x 64-column blocks x 64). It reports
whether each variant compiles, and the shared-memory traffic and barriers its SASS holds beyond the
wgmma's: a layout conversion of the accumulator would show as stores and loads of 32 values a thread
behind a barrier. (A [2, 64, 64] buffer of two 2-D boxes permuted to [64, 2, 64] aborts Triton 3.6's
compiler in ``combineCtaCgaWithShape``; the 3-D box avoids the permute.)
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

VERBOSE = "-v" in sys.argv
CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


@gluon.jit
def rule_probe(a_desc, b_desc, codes_desc, out_ptr, ACC_L: gl.constexpr, VIEW: gl.constexpr,
               num_warps: gl.constexpr):
    a = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)  # [K, 64 rows]
    b = gl.allocate_shared_memory(b_desc.dtype, [2] + b_desc.block_type.shape, b_desc.layout)  # [2, K, 64]
    codes = gl.allocate_shared_memory(codes_desc.dtype, codes_desc.block_type.shape, codes_desc.layout)
    # (the two X halves back to back as one [K, 128] operand, as the step kernel's ring does)
    b_wide = b._reinterpret(b.dtype, [1, b_desc.block_type.shape[0], 2 * b_desc.block_type.shape[1]],
                            b.layout).index(0)
    acc = warpgroup_mma(a.permute((1, 0)), b_wide, gl.zeros([64, 128], gl.float32, ACC_L))
    x = acc.reshape([64, 2, 64])  # (row, column half, column): the halves on the two warpgroups
    absmax = gl.max(gl.abs(x), axis=2)  # one 64-column codec block per row and half
    if VIEW:  # both halves' codes in one [64, 2, 64] buffer (a 3-D TMA box over the codes as rows x blocks x 64)
        old = codes.load(x.type.layout).to(gl.float32)
        y = x * (127.0 / absmax)[:, :, None] + old
        codes.store(y.to(gl.int8))
    else:
        y = x * (127.0 / absmax)[:, :, None]
    rows = gl.arange(0, 64, gl.SliceLayout(1, gl.SliceLayout(2, x.type.layout)))
    halves = gl.arange(0, 2, gl.SliceLayout(0, gl.SliceLayout(2, x.type.layout)))
    cols = gl.arange(0, 64, gl.SliceLayout(0, gl.SliceLayout(1, x.type.layout)))
    at = rows[:, None, None] * 128 + halves[None, :, None] * 64 + cols[None, None, :]
    gl.store(out_ptr + at, y)


def compile_variant(view: bool):
    t = torch.empty(256, 256, dtype=torch.bfloat16)
    a_desc = TensorDescriptor.from_tensor(t, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16))
    b_desc = TensorDescriptor.from_tensor(t, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16))
    c = torch.empty(256, 4, 64, dtype=torch.int8)  # a 256 x 256 state's codes as rows x 64-column blocks x 64
    codes_desc = TensorDescriptor.from_tensor(c, [64, 2, 64],
                                              gl.NVMMASharedLayout.get_default_for([64, 2, 64], gl.int8))
    out = torch.empty(64, 128, dtype=torch.float32)
    acc_l = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 2], instr_shape=[16, 64, 16])
    constexprs = dict(ACC_L=acc_l, VIEW=view, num_warps=8)
    sig = {"a_desc": mangle_type(a_desc), "b_desc": mangle_type(b_desc), "codes_desc": mangle_type(codes_desc),
           "out_ptr": mangle_type(out), **{k: "constexpr" for k in constexprs}}
    src = GluonASTSource(rule_probe, sig, constexprs, {(3,): [["tt.divisibility", 16]]})
    return triton.compile(src, target=GPUTarget("cuda", 90, 64), options=dict(num_warps=8))


def sass_counts(kernel) -> collections.Counter:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        sass = subprocess.run([CUOBJDUMP, "-sass", f.name], capture_output=True, text=True).stdout
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", sass)
    return collections.Counter(ops)


def main() -> None:
    for view in (False, True):
        name = "accumulator as [64, 2, 64], row absmax per half" + (", codes through a [64, 2, 64] view" if view
                                                                     else "")
        try:
            counts = sass_counts(compile_variant(view))
        except Exception as e:  # noqa: BLE001 (the probe reports what does not compile)
            print(f"FAIL  {name}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        watched = {k: counts[k] for k in ("HGMMA", "LDS", "STS", "LDSM", "STSM", "BAR", "SHFL") if counts[k]}
        print(f"ok    {name}: {sum(counts.values())} SASS, {watched}")
        if VERBOSE:
            print("      ", dict(counts.most_common(25)))


if __name__ == "__main__":
    main()
