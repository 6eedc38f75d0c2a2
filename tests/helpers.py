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


def check_adam_at_lr_zero(rule: str, device: str, dtype: torch.dtype, config=None) -> None:
    """Adam/AdamW at lr 0 (a warmup's first steps) through the Triton path: the weight keeps its bits
    (an update that is exactly zero, not a NaN from the quotient's arithmetic) while the moments
    update as torch's. fp32 weight and states, or bf16 ones (the Gluon kernel's on the GPU: their two
    roundings per step put them within 2^-7 of torch's fp32 moments, relative to the largest)."""
    import forge_mcore as fm

    gen = torch.Generator().manual_seed(3)
    group = dict(lr=0.0, weight_decay=0.1)
    w = (torch.randn(72, 192, generator=gen) * 0.5).to(device=device, dtype=dtype)
    codec = "bf16" if dtype == torch.bfloat16 else "fp32"
    state = fm.ForgeParamState.create(w.clone(), rule, group, codec, codec)
    param = torch.nn.Parameter(w.float())
    opt = fm.get_rule(rule).torch_equivalent([param], **group)
    weight, g = w.clone(), state.rule.make_group(**group)
    for _ in range(2):
        dy = grid_tensor(37, 72, generator=gen, dtype=dtype).to(device)
        x = grid_tensor(37, 192, generator=gen, dtype=dtype).to(device)
        param.grad = (dy.double().t() @ x.double()).float()
        opt.step()
        fm.fused_wgrad_step(dy, x, weight, state, state.prepare_step(g), backend="triton", config=config)
    assert torch.equal(weight, w), "lr 0 moved the weight"
    tol = 2**-7 if dtype == torch.bfloat16 else 1e-6
    for name, ours in state.state_tensors().items():
        theirs = opt.state[param][name]
        assert_close_verbose(ours.float(), theirs, rtol=tol, atol=tol * theirs.abs().max().item(), what=name)
