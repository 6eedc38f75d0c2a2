"""The plain-torch oracle of the nn suite: the same model trained by torch.optim.AdamW."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable

import torch

from forge_mcore.models import example_batch, training_loss
from forge_mcore.nn import ForgeOptimizer

HP = dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)


def batches(model: torch.nn.Module, n: int, batch_size: int = 2, seq_len: int = 9, seed: int = 1) -> list[dict]:
    gen = torch.Generator().manual_seed(seed)
    return [example_batch(model, batch_size, seq_len, generator=gen) for _ in range(n)]


def train(model: torch.nn.Module, opt: torch.optim.Optimizer, data: Iterable, *,
          loss_fn: Callable = training_loss, scheduler=None, before_step: Callable | None = None) -> list[float]:
    losses = []
    for batch in data:
        loss = loss_fn(model, batch)
        loss.backward()
        if before_step is not None:
            before_step(opt)
        opt.step()
        opt.zero_grad()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    return losses


def noise_only_coordinates(model: torch.nn.Module, data: Iterable, loss_fn: Callable = training_loss
                           ) -> dict[str, torch.Tensor]:
    """{name: bool mask} of the coordinates whose exact gradient is zero on every batch (an
    attention key bias, a per-token bias the next LayerNorm cancels), found in float64. Any two
    implementations step those on rounding noise, which Adam amplifies to full-size updates, so
    they carry no signal; comparisons skip them."""
    twin = copy.deepcopy(model).double()
    masks = {name: torch.ones_like(p, dtype=torch.bool) for name, p in twin.named_parameters()}
    for batch in data:
        twin.zero_grad()
        loss_fn(twin, {k: v.double() if v.is_floating_point() else v for k, v in batch.items()}).backward()
        scale = max(float(p.grad.abs().max()) for p in twin.parameters() if p.grad is not None)
        for name, p in twin.named_parameters():
            if p.grad is not None:
                masks[name] &= p.grad.abs() < 1e-12 * scale
    skipped = sum(int(m.sum()) for m in masks.values())
    assert skipped <= 0.02 * sum(m.numel() for m in masks.values()), f"{skipped} noise-only coordinates"
    return masks


def assert_rel_close(actual: torch.Tensor, expected: torch.Tensor, rtol: float, what: str,
                     skip: torch.Tensor | None = None) -> None:
    """Relative error of the tensor, ||a - e|| / ||e||, over the coordinates not in ``skip``."""
    a, e = actual.double().flatten(), expected.double().flatten()
    if skip is not None:
        keep = ~skip.flatten()
        a, e = a[keep], e[keep]
    err = float((a - e).norm() / e.norm().clamp_min(1e-30))
    if not err <= rtol:
        worst = int((a - e).abs().argmax())
        raise AssertionError(f"{what}: relative error {err:.3g} > {rtol}; worst element got {float(a[worst]):.9g}, "
                             f"expected {float(e[worst]):.9g}")


def assert_weights_close(ref: torch.nn.Module, model: torch.nn.Module, rtol: float, what: str = "",
                         skip: dict[str, torch.Tensor] | None = None) -> None:
    """Every parameter, by name, within ``rtol`` relative (per weight) of the reference."""
    ref_params = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        assert_rel_close(p.detach(), ref_params[name].detach(), rtol, f"{what} {name}", (skip or {}).get(name))


def assert_states_close(ref: torch.nn.Module, ref_opt: torch.optim.Optimizer, opt: ForgeOptimizer,
                        rtol: float, skip: dict[str, torch.Tensor] | None = None) -> None:
    """The fused weights' decoded moments against torch.optim.AdamW's, per weight (and per expert)."""
    ref_params = dict(ref.named_parameters())
    assert opt.engine.managed, "nothing was fused"
    for handle in opt.engine.managed:
        m = re.fullmatch(r"(.*)\[(\d+)\]", handle.name)
        name, index = (m.group(1), int(m.group(2))) if m else (handle.name, None)
        ref_state = ref_opt.state[ref_params[name]]
        mask = (skip or {}).get(name)
        for key, value in handle.state.state_tensors().items():
            expected = ref_state[key] if index is None else ref_state[key][index]
            sel = None if mask is None else (mask if index is None else mask[index])
            assert_rel_close(value, expected.reshape(value.shape), rtol, f"{handle.name} {key}",
                             None if sel is None else sel.reshape(value.shape))
