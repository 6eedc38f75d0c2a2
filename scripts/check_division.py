"""The block codecs' scale division ``x / Q`` as ``kernels.tl_bits.div_exact_by_constant`` computes it,
checked against the correctly rounded quotient for every non-negative finite fp32 x, on the CPU.

    python scripts/check_division.py 127 255      # ~6 min per constant on 2 cores; 0 mismatches each
    python scripts/check_division.py 448          # fp8's constant: 599,186 mismatches (x / 448 subnormal)

The kernel computes q = x * R, then fma(fma(q, -Q, x), R, q) with R = 1/Q rounded to fp32. numpy has no
fp32 fma, so each one is the exact float64 product plus the addend as a TwoSum pair, rounded to fp32 once
(ties broken by the pair's low part). The GPU test ``test_codec_divisions_give_div_rn_bits_for_every_operand``
checks the compiled code against div_rn on the device; this script checks the arithmetic it relies on.
"""

from __future__ import annotations

import sys
import time

import numpy as np

INF_BITS = 0x7F800000


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fp32 fma: a * b + c rounded once to nearest-even (elementwise, exact)."""
    p = a.astype(np.float64) * b.astype(np.float64)  # exact: 24 + 24 bits
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)  # TwoSum: s + err == p + c exactly
    f = s.astype(np.float32)
    # s's rounding to fp32 is p + c's, unless s is an fp32 midpoint that err moves off
    f64 = f.astype(np.float64)
    up, down = np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))
    f = np.where((s == (up.astype(np.float64) + f64) / 2) & (err > 0), up, f)
    return np.where((s == (down.astype(np.float64) + f64) / 2) & (err < 0), down, f)


def div_by_constant(x: np.ndarray, q: float) -> np.ndarray:
    """``div_exact_by_constant(x, q)``'s arithmetic on fp32 arrays."""
    r = np.float32(1.0 / q)
    p = x * r
    return fma32(fma32(p, np.full_like(x, -q), x), np.full_like(x, r), p)


def mismatches(q: float, first: int = 0, last: int = INF_BITS, chunk: int = 1 << 24) -> int:
    """Operands with bit patterns in [first, last) whose quotient differs from the correctly rounded x / q."""
    bad = 0
    for start in range(first, last, chunk):
        x = np.arange(start, min(start + chunk, last), dtype=np.uint32).view(np.float32)
        want = (x.astype(np.float64) / q).astype(np.float32)  # float64 then fp32: innocuous double rounding
        bad += int((div_by_constant(x, q).view(np.uint32) != want.view(np.uint32)).sum())
    return bad


if __name__ == "__main__":
    for q in map(float, sys.argv[1:] or ["127", "255"]):
        t = time.time()
        print(f"x / {q:g}: {mismatches(q)} mismatches over every non-negative finite fp32 x ({time.time() - t:.0f} s)",
              flush=True)
