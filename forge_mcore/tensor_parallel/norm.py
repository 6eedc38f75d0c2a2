"""A torch LayerNorm / RMSNorm for megatron-core's local spec that also runs
under sequence parallelism.

megatron's ``WrappedTorchNorm`` (what ``get_gpt_layer_local_spec`` uses without
Transformer Engine or apex) refuses ``sequence_parallel``. The norm itself is
per token, so a sequence shard normalizes correctly; only its weight gradient
is then a partial sum over the shards. Marking the parameters
``sequence_parallel`` makes ``finalize_model_grads`` all-reduce them across TP
(``_allreduce_non_tensor_model_parallel_grads``), as megatron does for its
Transformer Engine and apex norms.
"""

from __future__ import annotations

import copy

import torch
from megatron.core.transformer.torch_norm import WrappedTorchNorm
from megatron.core.transformer.transformer_config import TransformerConfig


class SequenceParallelTorchNorm:
    """``WrappedTorchNorm`` (same arguments, same checks) that accepts sequence parallelism."""

    def __new__(cls, config: TransformerConfig, hidden_size: int, eps: float = 1e-5, **kwargs) -> torch.nn.Module:
        stock_config = copy.copy(config)
        stock_config.sequence_parallel = False  # the only check WrappedTorchNorm makes that does not apply
        norm = WrappedTorchNorm(stock_config, hidden_size, eps, **kwargs)
        for param in norm.parameters():
            param.sequence_parallel = config.sequence_parallel
        return norm
