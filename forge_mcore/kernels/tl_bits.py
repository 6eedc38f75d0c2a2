"""Arithmetic the epilogues share: bf16 <-> fp32 conversions, division, square root.

Conversions: Triton's interpreter truncates fp32 -> bf16 and flushes bf16
subnormals to zero (triton 3.6 ``_convert_float``), while the GPU rounds to
nearest even. Under the interpreter the conversions are written on the bits
(exact); compiled, narrowing is the hardware's ``cvt`` (one instruction per pair of
elements, round-to-nearest-even: the same results) and widening a shift and a mask
on the register holding a pair. Weights and states are
finite here (non-finite tiles are skipped before any store), so NaN payloads
need no care.
"""

import os

import triton
import triton.language as tl

# Division and square root in the rule epilogues. Default: the GPU's approximate
# instructions with subnormals flushed (div.approx.ftz, sqrt.approx.ftz: <= 2 ulp, a
# subnormal operand or result is zero; as apex's --use_fast_math optimizers), which keep
# the ALU-heavy epilogue short: without .ftz the compiler wraps each one in a subnormal
# rescaling (AdamW's Gluon step: 4,792 -> 4,272 SASS instructions; session 12 measured
# the int8 step 4-5% faster with this and the hoisted per-step scalars).
# FORGE_IEEE_MATH=1 selects IEEE round-to-nearest (bit-faithful to torch's
# CUDA optimizers, ~1.6x the epilogue's instructions). Read once, at import.
# The interpreter computes both exactly, in numpy.
IEEE_MATH: tl.constexpr = tl.constexpr(os.environ.get("FORGE_IEEE_MATH", "0") == "1")
INTERPRETING: tl.constexpr = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"))


@triton.jit
def div(a, b):
    if IEEE_MATH:
        return tl.div_rn(a, b)
    elif INTERPRETING:
        return a / b
    else:
        return tl.inline_asm_elementwise("div.approx.ftz.f32 $0, $1, $2;", "=r,r,r", [a, b], dtype=tl.float32,
                                         is_pure=True, pack=1)


@triton.jit
def div_exact(a, b):
    """IEEE division whatever IEEE_MATH says: for per-block scale arithmetic, which
    the torch twins must reproduce exactly and which costs nothing per element."""
    return tl.div_rn(a, b)


# The block codecs divide by and into their code range once per row and state: eight IEEE
# divisions per thread and half tile in the int8 rule, each ~12 instructions with a range check
# and a slow-path call that these operands never take (6% of the rule's loop). The two below
# give div_rn's bits in 3 and 8 instructions, where a config asks for them
# (``TileConfig.fast_division``); tests/functional/test_kernel_gpu.py checks them
# against div_rn for every fp32 operand they are given, and scripts/check_division.py checks
# the first one's arithmetic exhaustively on the CPU.
@triton.jit
def div_exact_by_constant(x, Q: tl.constexpr):
    """``div_exact(x, Q)`` for Q 127 or 255 and any non-negative x: the product with Q's rounded
    reciprocal, corrected by one fma. Not for any Q: for 448 (fp8's) it misses div_rn's bits on
    599,186 operands (session 25), so the fp8 codec keeps ``div_exact``."""
    if INTERPRETING:
        return div_exact(x, Q + tl.zeros_like(x))
    else:
        R: tl.constexpr = 1.0 / Q  # (rounded to fp32 once: a double's 53 bits round innocuously)
        q = x * R
        return tl.fma(tl.fma(q, -Q, x), R, q)


@triton.jit
def div_exact_constant_by(Q: tl.constexpr, x):
    """``div_exact(Q, x)`` for Q 127 or 255 and x in (2^-118, 2^128) (a block codec's absmax
    above ``FLUSH_BELOW``, finite): div_rn's own fast path (reciprocal, a Newton step, quotient,
    one correction) without its range check and slow-path call, on x / 4, so that 1 / (x / 4)
    stays normal up to fp32's largest x and Q / (x / 4) finite down to 2^-118; the quotient
    times 4 back is exact. Outside that range the result is meaningless: callers select it away."""
    if INTERPRETING:
        return div_exact(Q + tl.zeros_like(x), x)
    else:
        x = x * 0.25
        r = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                      is_pure=True, pack=1)
        r = tl.fma(r, tl.fma(-x, r, 1.0), r)
        q = Q * r
        return tl.fma(r, tl.fma(-x, q, Q), q) * 0.25


@triton.jit
def sqrt(x):
    if IEEE_MATH:
        return tl.sqrt_rn(x)
    elif INTERPRETING:
        return tl.sqrt(x)
    else:
        return tl.inline_asm_elementwise("sqrt.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True,
                                         pack=1)


# The int8 codec's conversions on the fp32 and integer pipes: the conversion unit (I2F, F2I,
# FRND) takes 16 lanes per SM and clock against the fp32 pipe's 128, and the int8 epilogue
# spent 640 of them per thread and 64 x 128 tile on decoding and encoding two states.
# Floats in [2^23, 2^24) are exactly the integers, so a byte written into the mantissa of
# 2^23 is that integer's float, and 1.5 x 2^23 added to a small x * inv in one fma rounding to
# nearest is 1.5 x 2^23 + round(x * inv): both exact, identical results.
@triton.jit
def code_biased_f32(codes):
    """2^23 + c for uint8 codes c, 2^23 + 128 + c for int8 ones, as fp32 (exact): the code's byte
    (a signed one with its sign bit flipped, c + 128) permuted into the mantissa of 2^23, one
    byte permute per element on a register of four codes (the int8 codec's stored order gives a
    Gluon thread its codes four to a register: ``codecs/blockwise.py``)."""
    if INTERPRETING:
        return codes.to(tl.float32) + (8388608.0 if codes.dtype == tl.uint8 else 8388736.0)
    elif codes.dtype == tl.uint8:
        return tl.inline_asm_elementwise(
            "prmt.b32 $0, $4, 0x4B000000, 0x7540; prmt.b32 $1, $4, 0x4B000000, 0x7541; "
            "prmt.b32 $2, $4, 0x4B000000, 0x7542; prmt.b32 $3, $4, 0x4B000000, 0x7543;",
            "=r,=r,=r,=r,r", [codes], dtype=tl.float32, is_pure=True, pack=4)
    else:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 w; xor.b32 w, $4, 0x80808080; prmt.b32 $0, w, 0x4B000000, 0x7540; "
            "prmt.b32 $1, w, 0x4B000000, 0x7541; prmt.b32 $2, w, 0x4B000000, 0x7542; "
            "prmt.b32 $3, w, 0x4B000000, 0x7543; }",
            "=r,=r,=r,=r,r", [codes], dtype=tl.float32, is_pure=True, pack=4)


@triton.jit
def rounded_low_byte(x, inv):
    """An int32 whose low byte is x * inv rounded half to even, for |x * inv| < 2^22: cast it to
    int8 for the code. Compiled, the bits of fma(x, inv, 1.5 x 2^23) themselves: one rounding of
    the exact product to an integer above 2^23 (1.5 x 2^23 is even, so ties go to the even code):
    one instruction, where floor(x * inv + 1/2) (the codec's rule before session 32) took an fma
    and an add.rm toward -inf."""
    if INTERPRETING:
        return (x * inv + 12582912.0 - 12582912.0).to(tl.int32)
    else:
        z = tl.inline_asm_elementwise("fma.rn.f32 $0, $1, $2, 0f4B400000;", "=r,r,r", [x, inv], dtype=tl.float32,
                                      is_pure=True, pack=1)
        return z.to(tl.int32, bitcast=True)


@triton.jit
def low_bytes(z, UNSIGNED: tl.constexpr):
    """The low byte of each int32 of ``z`` as uint8 (UNSIGNED) or int8: compiled, four to a register
    by three byte permutes, where a plain narrowing packs them a byte at a time."""
    if INTERPRETING:
        return z.to(tl.uint8 if UNSIGNED else tl.int8)
    else:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 lo, hi; prmt.b32 lo, $1, $2, 0x0040; prmt.b32 hi, $3, $4, 0x0040; "
            "prmt.b32 $0, lo, hi, 0x5410; }",
            "=r,r,r,r,r", [z], dtype=tl.uint8 if UNSIGNED else tl.int8, is_pure=True, pack=4)


@triton.jit
def bf16_to_f32(x):
    """Widen a bf16 tile to fp32 exactly (subnormals included). Compiled, on the pair of bf16 a
    register holds: one shift and one mask, where ``x.to(tl.float32)`` unpacks the pair first (a
    byte permute for the upper element, then a shift: 1.5 instructions per element against 1)."""
    if INTERPRETING:
        return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    else:
        return tl.inline_asm_elementwise("shl.b32 $0, $2, 16; and.b32 $1, $2, 0xFFFF0000;", "=r,=r,r", [x],
                                         dtype=tl.float32, is_pure=True, pack=2)


@triton.jit
def f32_to_bf16_bits(bits):
    """Narrow fp32 bit patterns whose low 16 bits are zero to bf16 (exact)."""
    return (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def f32_to_bf16_rne(x):
    """Round an fp32 tile to bf16, nearest-even."""
    if INTERPRETING:
        bits = x.to(tl.uint32, bitcast=True)
        bits = bits + (((bits >> 16) & 1) + 0x7FFF)
        return f32_to_bf16_bits(bits & 0xFFFF0000)
    else:
        return x.to(tl.bfloat16, fp_downcast_rounding="rtne")


@triton.jit
def f32_to_bf16_stochastic(x, seed, offsets):
    """Round an fp32 tile to bf16 stochastically: up with probability equal to
    the discarded fraction, so E[round(x)] = x (Gupta et al. 2015)."""
    noise = tl.randint(seed, offsets) & 0xFFFF
    bits = x.to(tl.uint32, bitcast=True) + noise
    return f32_to_bf16_bits(bits & 0xFFFF0000)
