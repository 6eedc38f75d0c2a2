"""Triton kernels of the blockwise LM-head loss (``forge_mcore.nn.loss``).

A vocabulary block's logits (tokens x block rows, the head's dtype) are read in
place: no fp32 copy of the block is made, and each direction costs one launch
instead of a dozen small torch ops (the batch-1 step is paced by the host).
Their torch twins in ``forge_mcore.nn.loss`` are the reference the tests compare
with; both compute in fp32, as HF upcasts the logits.

* ``block_stats``: per token, the block's max logit, the sum of exp(logit - max),
  and the target logit when the token's target lies in this block;
* ``block_dlogits_``: the block's logits overwritten by dloss/dlogits =
  exp(logit - lse) * coef - coef * onehot, PyTorch's log-softmax backward order.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

CHUNK = 1024  # columns per loop step (stats) or per program (dlogits)


@triton.jit
def _block_stats_kernel(logits, stride, cols, target_row, target_block, block_index, maxes, sums, target,
                        CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = logits + row.to(tl.int64) * stride
    offs = tl.arange(0, CHUNK)
    peak = tl.max(tl.load(base + offs, mask=offs < cols, other=float("-inf")).to(tl.float32), axis=0)
    for start in range(CHUNK, cols, CHUNK):  # the max first: one exp per logit, no rescaling
        x = tl.load(base + start + offs, mask=start + offs < cols, other=float("-inf")).to(tl.float32)
        peak = tl.maximum(peak, tl.max(x, axis=0))
    total = 0.0
    for start in range(0, cols, CHUNK):
        x = tl.load(base + start + offs, mask=start + offs < cols, other=float("-inf")).to(tl.float32)
        total += tl.sum(tl.exp(x - peak), axis=0)
    tl.store(maxes + row, peak)
    tl.store(sums + row, total)
    if tl.load(target_block + row) == block_index:
        tl.store(target + row, tl.load(base + tl.load(target_row + row)).to(tl.float32))


@triton.jit
def _block_dlogits_kernel(logits, stride, cols, lse, coef, target_row, target_block, block_index,
                          CHUNK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    mask = offs < cols
    ptrs = logits + row.to(tl.int64) * stride + offs
    x = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(coef + row)
    grad = tl.exp(x - tl.load(lse + row)) * c
    hit = (offs == tl.load(target_row + row)) & (tl.load(target_block + row) == block_index)
    grad = tl.where(hit, grad - c, grad)
    tl.store(ptrs, grad.to(logits.dtype.element_ty), mask=mask)


def _check(logits: torch.Tensor, *vectors: torch.Tensor) -> None:
    if logits.dim() != 2 or logits.stride(1) != 1 or logits.dtype not in (torch.bfloat16, torch.float32):
        raise ValueError(f"logits must be a row-contiguous 2-D bf16/fp32 tensor, got {logits.dtype} "
                         f"{tuple(logits.shape)} with strides {logits.stride()}")
    for v in vectors:
        if v.shape[0] != logits.shape[0] or not v.is_contiguous() or v.device != logits.device:
            raise ValueError(f"per-token vectors must be contiguous, of length {logits.shape[0]}, on "
                             f"{logits.device}; got {tuple(v.shape)} on {v.device}")


def block_stats(logits: torch.Tensor, target_row: torch.Tensor, target_block: torch.Tensor, block_index: int,
                maxes: torch.Tensor, sums: torch.Tensor, target: torch.Tensor) -> None:
    """Write each token's max logit and sum of exp(logit - max) of this block into ``maxes``
    and ``sums`` (fp32), and its target logit into ``target`` where ``target_block == block_index``."""
    _check(logits, target_row, target_block, maxes, sums, target)
    _block_stats_kernel[(logits.shape[0],)](logits, logits.stride(0), logits.shape[1], target_row, target_block,
                                             block_index, maxes, sums, target, CHUNK=CHUNK)


def block_dlogits_(logits: torch.Tensor, lse: torch.Tensor, coef: torch.Tensor, target_row: torch.Tensor,
                   target_block: torch.Tensor, block_index: int) -> torch.Tensor:
    """Overwrite ``logits`` with (softmax - onehot) * coef per token (fp32 math); returns it."""
    _check(logits, lse, coef, target_row, target_block)
    grid = (logits.shape[0], triton.cdiv(logits.shape[1], CHUNK))
    _block_dlogits_kernel[grid](logits, logits.stride(0), logits.shape[1], lse, coef, target_row, target_block,
                                block_index, CHUNK=CHUNK)
    return logits
