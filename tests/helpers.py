"""Shared test utilities: exactly-summable inputs, guarded buffers, verbose compares."""

from __future__ import annotations

import torch

POISON = float("nan")


def grid_tensor(*shape: int, generator: torch.Generator | None = None, scale: int = 64,
                dtype: torch.dtype = torch.float32, device="cpu") -> torch.Tensor:
    """Random multiples of 1/scale in [-1, 1]: products and their sums are exact
    in fp32 at test sizes, so G = dY^T X is bit-identical in any summation order."""
    x = torch.randint(-scale, scale + 1, shape, generator=generator, device=device).float() / scale
    return x.to(dtype=dtype)


def guarded_empty(shape: tuple[int, ...], dtype: torch.dtype, guard: int = 97, device="cpu"):
    """A contiguous tensor carved out of a larger buffer whose margins hold a
    sentinel: any write outside the tensor (a bad mask) changes a margin."""
    n = 1
    for s in shape:
        n *= s
    buf = torch.empty(n + 2 * guard, dtype=dtype, device=device)
    _fill_sentinel(buf)
    return buf[guard: guard + n].view(shape), buf, guard


def _fill_sentinel(buf: torch.Tensor) -> None:
    if buf.dtype.is_floating_point and buf.element_size() > 1:
        buf.fill_(-7777.0)
    else:
        buf.view(torch.uint8).fill_(0xA5)


def margins_intact(buf: torch.Tensor, guard: int) -> bool:
    ref = torch.empty_like(buf[:guard])
    _fill_sentinel(ref)
    head = buf[:guard].view(torch.uint8) if buf.element_size() == 1 else buf[:guard]
    tail = buf[-guard:].view(torch.uint8) if buf.element_size() == 1 else buf[-guard:]
    ref = ref.view(torch.uint8) if buf.element_size() == 1 else ref
    return bool(torch.equal(head, ref) and torch.equal(tail, ref))


def assert_close_verbose(actual: torch.Tensor, expected: torch.Tensor, *, rtol: float, atol: float = 0.0,
                         what: str = "") -> None:
    """Elementwise |a - e| <= atol + rtol |e|; on failure print the worst offenders."""
    a, e = actual.double(), expected.double()
    if not torch.isfinite(a).all():
        raise AssertionError(f"{what}: non-finite values in the result (unwritten or poisoned output?)")
    err = (a - e).abs()
    bound = atol + rtol * e.abs()
    bad = err > bound
    if bad.any():
        idx = bad.nonzero()[:8].tolist()
        rows = [f"  at {tuple(i)}: got {a[tuple(i)].item():.9g}, expected {e[tuple(i)].item():.9g}" for i in idx]
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.numel()} elements out of tolerance "
            f"(rtol={rtol}, atol={atol}, max err {err.max().item():.3g})\n" + "\n".join(rows)
        )
