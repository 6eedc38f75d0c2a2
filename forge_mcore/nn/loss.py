"""The LM head fused with its cross-entropy loss: no logits tensor, and with FORGE no head gradient.

HF's causal-LM loss materializes the logits (tokens x vocab, bf16), upcasts them
to fp32 and keeps fp32 buffers of the same size through the softmax backward: at
Qwen3's 151,936-entry vocabulary that is ~1 GiB per 512 tokens, at the moment
every activation is still alive, and it sets a FORGE run's peak (``docs/nn.md``).

``linear_cross_entropy`` computes the same loss one vocabulary block at a time:

* forward: each block's logits (the head's own dtype, then fp32 as HF upcasts
  them) feed a running log-sum-exp and the target logit; only the per-token
  log-sum-exp is kept;
* backward: each block's logits are recomputed, its dlogits = (softmax - onehot)
  * dloss formed, dX accumulated in fp32 from the pre-update rows, and then the
  rows are stepped by the fused kernel from (dlogits block, X)
  (``ForgeEngine.backward_rows``): the head's weight gradient never exists. A
  head that is not fused (tied to the embedding, excluded) gets its gradient
  block by block instead, each row block one GEMM.

The result is HF's loss with the same reduction: mean over non-ignored targets,
or sum / ``num_items_in_batch`` when given.

``fuse_causal_lm_loss(model)`` (``patch(..., fused_loss=True)``) makes an HF
causal-LM's training forward use it; its output then has ``logits=None``.
Forwards without labels or without grad (evaluation, generation) are the
model's own.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..kernels.cross_entropy import block_dlogits_, block_stats
from ..ops import resolve_backend
from .linear import FusedSite, _autocast_dtype, check_site

# Elements of one fp32 logits block (16 MiB); the block's rows are this over the token count. At
# Qwen3-8B, 512 tokens, 2^23 put the loss's blocks 47 MB above the rest of the step's peak, 2^22
# 8 MB, 2^21 none (scripts/device/loss_peak.py, results/2026-11-30/session6/).
BLOCK_ELEMENTS = 1 << 22
# Backend of linear_cross_entropy when none is given: torch ops per block. The kernels
# ("triton", patch(loss_backend="triton")) pass their GPU test but were not faster at
# Qwen3-8B bs1 s512 (docs/nn.md), so they are opt-in.
DEFAULT_BACKEND = "torch"
# Block rows are a multiple of this: whole kernel tiles, the same tile grid as an unblocked step.
ROW_MULTIPLE = 256


def vocab_blocks(vocab: int, tokens: int, rows: int | None = None) -> list[tuple[int, int]]:
    """(start, stop) row blocks of a ``vocab``-row head for ``tokens`` tokens."""
    if rows is None:
        rows = max(ROW_MULTIPLE, BLOCK_ELEMENTS // max(tokens, 1) // ROW_MULTIPLE * ROW_MULTIPLE)
    if not isinstance(rows, int) or rows < 1:
        raise ValueError(f"block rows must be a positive int, got {rows!r}")
    return [(start, min(start + rows, vocab)) for start in range(0, vocab, rows)]


def _block_stats_torch(logits: torch.Tensor, wide: torch.dtype, target_row: torch.Tensor,
                       target_block: torch.Tensor, b: int, maxes: torch.Tensor, sums: torch.Tensor,
                       target: torch.Tensor) -> None:
    """Torch twin of ``kernels.cross_entropy.block_stats`` (any float dtype; CPU and the reference)."""
    x = logits.to(wide)  # one block at a time, worked in place
    row = target_row.clamp(max=x.shape[1] - 1)
    target += torch.where(target_block == b, x.gather(1, row[:, None]).squeeze(1), 0.0)
    maxes[b] = x.amax(dim=1)
    sums[b] = x.sub_(maxes[b][:, None]).exp_().sum(dim=1)


def _block_dlogits_torch(logits: torch.Tensor, lse: torch.Tensor, coef: torch.Tensor, target_row: torch.Tensor,
                         target_block: torch.Tensor, b: int) -> torch.Tensor:
    """Torch twin of ``kernels.cross_entropy.block_dlogits_``: (softmax - onehot) * coef in
    ``lse``'s precision, PyTorch's log-softmax backward order, cast to the logits' dtype."""
    probs = logits.to(lse.dtype).sub_(lse[:, None]).exp_().mul_(coef[:, None])
    row = target_row.clamp(max=probs.shape[1] - 1)
    probs.scatter_add_(1, row[:, None], torch.where(target_block == b, -coef, 0.0)[:, None])
    return probs.to(logits.dtype)


class LinearCrossEntropyFunction(torch.autograd.Function):
    """``cross_entropy(F.linear(hidden, weight).float(), labels)`` in vocabulary blocks (module docstring)."""

    @staticmethod
    def forward(ctx: Any, hidden: torch.Tensor, weight: torch.Tensor, site: FusedSite | None, labels: torch.Tensor,
                ignore_index: int, num_items: torch.Tensor | float | None, block_rows: int | None,
                backend: str) -> torch.Tensor:
        compute = _autocast_dtype(hidden) or weight.dtype
        wide = torch.promote_types(compute, torch.float32)  # the loss's precision (HF: .float())
        kernels = backend == "triton" and wide == torch.float32
        blocks = vocab_blocks(weight.shape[0], hidden.shape[0], block_rows)
        width = blocks[0][1] - blocks[0][0]
        tokens = hidden.shape[0]
        with torch.autocast(hidden.device.type, enabled=False):
            h = hidden.to(compute)
            valid = labels != ignore_index
            # as cross_entropy's device-side assert (no host sync): a target outside the vocabulary
            # would otherwise silently count as a missing logit
            torch._assert_async((~valid | ((labels >= 0) & (labels < weight.shape[0]))).all(),
                                f"linear_cross_entropy: a target is outside [0, {weight.shape[0]}) and is not "
                                f"ignore_index={ignore_index}")
            # which block holds each token's target (-1: ignored) and where in the block
            target_block, target_row = torch.where(valid, labels // width, -1), labels % width
            target = torch.zeros(tokens, dtype=wide, device=h.device)
            maxes = torch.empty(len(blocks), tokens, dtype=wide, device=h.device)
            sums = torch.empty_like(maxes)
            for b, (start, stop) in enumerate(blocks):
                logits = F.linear(h, weight[start:stop].to(compute))
                if kernels:
                    block_stats(logits, target_row, target_block, b, maxes[b], sums[b], target)
                else:
                    _block_stats_torch(logits, wide, target_row, target_block, b, maxes, sums, target)
                del logits
            # the blocks' partial sums combined in float64 (a few values per token): no rounding beyond
            # what each block's own sum has
            maxes = maxes.double()
            top = maxes.amax(dim=0)
            lse = (top + (sums.double() * (maxes - top).exp()).sum(dim=0).log()).to(wide)
            divisor = valid.sum() if num_items is None else num_items
            loss = torch.where(valid, lse - target, 0.0).sum() / divisor
        ctx.save_for_backward(hidden, weight, lse, valid, target_block, target_row)
        ctx.site, ctx.compute, ctx.blocks, ctx.divisor, ctx.kernels = site, compute, blocks, divisor, kernels
        return loss

    @staticmethod
    def backward(ctx: Any, grad_loss: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        if torch.is_grad_enabled():
            raise RuntimeError("backward(create_graph=True) through forge_mcore's fused LM-head loss is not supported")
        hidden, weight, lse, valid, target_block, target_row = ctx.saved_tensors
        site: FusedSite | None = ctx.site
        blocks = ctx.blocks
        with torch.autocast(hidden.device.type, enabled=False):
            h = hidden.to(ctx.compute)
            coef = torch.where(valid, grad_loss.to(lse.dtype) / ctx.divisor, 0.0)  # d loss / d (token's loss)
            grad_hidden = torch.zeros(h.shape, dtype=lse.dtype, device=h.device) if ctx.needs_input_grad[0] \
                else None
            index = {start: b for b, (start, _) in enumerate(blocks)}

            def block_grad(start: int, stop: int) -> torch.Tensor:
                """dlogits of rows [start, stop), and their share of dX from the rows' current
                (pre-update) values."""
                b = index[start]
                rows = weight[start:stop].to(ctx.compute)
                logits = F.linear(h, rows)
                if ctx.kernels:
                    dlogits = block_dlogits_(logits, lse, coef, target_row, target_block, b)
                else:
                    dlogits = _block_dlogits_torch(logits, lse, coef, target_row, target_block, b)
                del logits
                if grad_hidden is not None:
                    grad_hidden.add_(dlogits @ rows)
                return dlogits

            grad_weight = None
            if site is not None and site.steps_in_this_backward():  # each block's rows stepped after their dX share
                site.engine.backward_rows(site.weight, h, blocks, block_grad)
            elif site is not None and grad_hidden is not None:  # a backward that asks only for dX
                for start, stop in blocks:
                    block_grad(start, stop)
            elif ctx.needs_input_grad[1]:
                grad_weight = torch.empty_like(weight)
                for start, stop in blocks:
                    grad_weight[start:stop] = (block_grad(start, stop).t() @ h).to(weight.dtype)
        grad_hidden = grad_hidden.to(hidden.dtype) if grad_hidden is not None else None
        return grad_hidden, grad_weight, None, None, None, None, None, None


def linear_cross_entropy(hidden: torch.Tensor, head: nn.Linear, labels: torch.Tensor, *, ignore_index: int = -100,
                         num_items_in_batch: torch.Tensor | int | None = None, block_rows: int | None = None,
                         backend: str | None = None) -> torch.Tensor:
    """``F.cross_entropy(head(hidden).float().view(-1, V), labels.view(-1), ignore_index=...)``
    (mean over non-ignored targets; sum / ``num_items_in_batch`` when given) without the logits.

    hidden: (..., H) activations entering the head; labels: (...) target ids, already shifted.
    head: an ``nn.Linear`` without bias (FORGE-fused or not; see the module docstring).
    block_rows: vocabulary rows per block (default: ``BLOCK_ELEMENTS`` logits per block).
    backend: ``"torch"`` (torch ops per block) or ``"triton"`` (one kernel per block and
        direction, ``kernels.cross_entropy``: no fp32 copy of a block; CUDA or the interpreter);
        default ``DEFAULT_BACKEND``.
    """
    if not isinstance(head, nn.Linear) or head.bias is not None:
        raise TypeError(f"linear_cross_entropy needs a bias-free nn.Linear head, got {type(head).__name__}"
                        + (" with a bias" if isinstance(head, nn.Linear) else ""))
    if hidden.shape[:-1] != labels.shape:
        raise ValueError(f"hidden {tuple(hidden.shape)} and labels {tuple(labels.shape)} disagree on the token "
                         "dimensions")
    site = getattr(head, "_forge_site", None)
    if site is not None:
        check_site(site, head.weight)
    flat_hidden, flat_labels = hidden.reshape(-1, hidden.shape[-1]), labels.reshape(-1).to(hidden.device)
    backend = resolve_backend(hidden.device, backend or DEFAULT_BACKEND)
    if not torch.is_grad_enabled() or not head.weight.requires_grad:
        site = None  # nothing to step: the plain blockwise loss
    return LinearCrossEntropyFunction.apply(flat_hidden, head.weight, site, flat_labels, ignore_index,
                                            num_items_in_batch, block_rows, backend)


# ---------------------------------------------------------------------------
# HF causal LMs
# ---------------------------------------------------------------------------

# Causal-LM classes whose forward is "decoder -> lm_head -> ForCausalLMLoss", reproduced below.
SUPPORTED_CAUSAL_LMS = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM")


def check_causal_lm(model: nn.Module) -> None:
    """Raise, naming what to change, if ``fuse_causal_lm_loss`` cannot reproduce this model's loss."""
    name = type(model).__name__
    if name not in SUPPORTED_CAUSAL_LMS:
        raise ValueError(
            f"fused_loss=True supports HF {', '.join(SUPPORTED_CAUSAL_LMS)}; got {name}. For another model compute "
            "the loss with forge_mcore.nn.linear_cross_entropy(hidden, lm_head, shifted_labels), or pass "
            "fused_loss=False"
        )
    head = getattr(model, "lm_head", None)
    if not isinstance(head, nn.Linear) or head.bias is not None or not isinstance(getattr(model, "model", None),
                                                                               nn.Module):
        raise ValueError(f"fused_loss=True: {name} has no bias-free nn.Linear lm_head over a .model decoder")
    if "forward" in model.__dict__:
        raise RuntimeError(f"fused_loss=True: {name}.forward is already overridden on this instance (by another "
                           "library's patch?); the fused loss would replace it")


def _fused_loss_forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                        inputs_embeds=None, labels=None, use_cache=None, logits_to_keep=0, **kwargs: Any):
    shift_labels = kwargs.get("shift_labels")
    if (labels is None and shift_labels is None) or not torch.is_grad_enabled():
        return type(self).forward(self, input_ids=input_ids, attention_mask=attention_mask,
                                  position_ids=position_ids, past_key_values=past_key_values,
                                  inputs_embeds=inputs_embeds, labels=labels, use_cache=use_cache,
                                  logits_to_keep=logits_to_keep, **kwargs)
    from transformers.modeling_outputs import CausalLMOutputWithPast

    outputs = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache, **kwargs)
    ignore_index = kwargs.get("ignore_index", -100)
    if shift_labels is None:  # as transformers' ForCausalLMLoss: position t predicts label t+1
        shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    loss = linear_cross_entropy(outputs.last_hidden_state, self.lm_head, shift_labels, ignore_index=ignore_index,
                                num_items_in_batch=kwargs.get("num_items_in_batch"),
                                backend=self.__dict__.get("_forge_loss_backend"))
    return CausalLMOutputWithPast(loss=loss, logits=None, past_key_values=outputs.past_key_values,
                                  hidden_states=outputs.hidden_states, attentions=outputs.attentions)


def fuse_causal_lm_loss(model: nn.Module, backend: str | None = None) -> None:
    """Make ``model``'s training forward (labels given, grad enabled) compute its loss with
    ``linear_cross_entropy`` (on ``backend``, default ``DEFAULT_BACKEND``) and return
    ``logits=None``; ``unfuse_causal_lm_loss`` undoes it."""
    check_causal_lm(model)
    if backend not in (None, "torch", "triton"):
        raise ValueError(f"loss backend must be 'torch', 'triton' or None, got {backend!r}")
    model.forward = types.MethodType(_fused_loss_forward, model)
    model._forge_loss_backend = backend


def unfuse_causal_lm_loss(model: nn.Module) -> None:
    if getattr(model.__dict__.get("forward"), "__func__", None) is not _fused_loss_forward:
        raise ValueError("this model's loss is not fused (fuse_causal_lm_loss was not called on it)")
    del model.forward
    model.__dict__.pop("_forge_loss_backend", None)
