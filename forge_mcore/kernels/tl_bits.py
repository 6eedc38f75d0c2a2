"""Exact bf16 <-> fp32 conversions, written on the bits.

Triton's interpreter truncates fp32 -> bf16 and flushes bf16 subnormals to zero
(triton 3.6 ``_convert_float``), while the GPU rounds to nearest even. These
helpers are exact on both, so the CPU suite tests the very code the GPU runs.
Weights and states are finite here (non-finite tiles are skipped before any
store), so NaN payloads need no care.
"""

import os

import triton
import triton.language as tl

# IEEE (round-to-nearest) division and square root in the rule epilogues, the
# default: results match torch's to the last bit where the interpreter and the
# GPU agree. FORGE_IEEE_MATH=0 selects the approximate (2-ulp) instructions,
# several times cheaper in the ALU-heavy epilogue; read once, at import.
IEEE_MATH: tl.constexpr = tl.constexpr(os.environ.get("FORGE_IEEE_MATH", "1") != "0")


@triton.jit
def div(a, b):
    if IEEE_MATH:
        return tl.div_rn(a, b)
    else:
        return a / b


@triton.jit
def sqrt(x):
    if IEEE_MATH:
        return tl.sqrt_rn(x)
    else:
        return tl.sqrt(x)


@triton.jit
def bf16_to_f32(x):
    """Widen a bf16 tile to fp32 exactly (subnormals included)."""
    return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def f32_to_bf16_bits(bits):
    """Narrow fp32 bit patterns whose low 16 bits are zero to bf16 (exact)."""
    return (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def f32_to_bf16_rne(x):
    """Round an fp32 tile to bf16, nearest-even."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + (((bits >> 16) & 1) + 0x7FFF)
    return f32_to_bf16_bits(bits & 0xFFFF0000)


@triton.jit
def f32_to_bf16_stochastic(x, seed, offsets):
    """Round an fp32 tile to bf16 stochastically: up with probability equal to
    the discarded fraction, so E[round(x)] = x (Gupta et al. 2015)."""
    noise = tl.randint(seed, offsets) & 0xFFFF
    bits = x.to(tl.uint32, bitcast=True) + noise
    return f32_to_bf16_bits(bits & 0xFFFF0000)
