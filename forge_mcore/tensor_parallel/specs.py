"""Layer specs with FORGE linears, built from megatron-core's local spec.

``forge_spec`` rewrites any local-spec tree (a layer ``ModuleSpec`` or a block's
``TransformerBlockSubmodules``): ``ColumnParallelLinear`` / ``RowParallelLinear``
become their FORGE twins -- in the dense modules (attention, dense MLP, shared
experts) when ``dense``, inside ``SequentialMLP`` experts when ``experts`` --
and megatron's ``WrappedTorchNorm`` becomes ``SequenceParallelTorchNorm``, so
the model also runs under sequence parallelism. ``forge_spec(spec, dense=False,
experts=False)`` is therefore the stock model with SP-capable norms: the
baseline a FORGE run is compared against.

``GPTModel.output_layer`` is built outside any spec; ``use_forge_output_layer``
converts it after construction. Transformer Engine specs are out of scope
(TE is not installable on our GPU machine), and grouped-GEMM experts need TE or
the grouped_gemm package: both are refused. Building a MoE spec here also
works around megatron-core 0.16.1's router, which needs TE to import without it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec, get_gpt_layer_local_spec
from megatron.core.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear
from megatron.core.transformer.moe import moe_utils
from megatron.core.transformer.moe.experts import SequentialMLP
from megatron.core.transformer.spec_utils import ModuleSpec, get_module
from megatron.core.transformer.torch_norm import WrappedTorchNorm
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules
from megatron.core.transformer.transformer_config import TransformerConfig

from .layers import ForgeColumnParallelLinear, ForgeRowParallelLinear
from .norm import SequenceParallelTorchNorm

_FORGE_TWIN = {ColumnParallelLinear: ForgeColumnParallelLinear, RowParallelLinear: ForgeRowParallelLinear}


def forge_spec(spec: Any, *, dense: bool = True, experts: bool = True) -> Any:
    """A copy of ``spec`` with FORGE linears where asked and SP-capable norms (module docstring)."""
    return _convert(spec, dense, experts, in_experts=False)


def _convert(node: Any, dense: bool, experts: bool, in_experts: bool) -> Any:
    if isinstance(node, ModuleSpec):
        module = get_module(node)
        _refuse_unsupported(module)
        in_experts = in_experts or (isinstance(module, type) and issubclass(module, SequentialMLP))
        return dataclasses.replace(
            node, module=_convert_class(module, dense, experts, in_experts), params=dict(node.params),
            submodules=_convert(node.submodules, dense, experts, in_experts),
        )
    if isinstance(node, type):
        _refuse_unsupported(node)
        return _convert_class(node, dense, experts, in_experts)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: _convert(getattr(node, f.name), dense, experts, in_experts)
                   for f in dataclasses.fields(node) if f.init}
        return dataclasses.replace(node, **changes)
    if isinstance(node, (list, tuple)):
        return type(node)(_convert(item, dense, experts, in_experts) for item in node)
    return node


def _convert_class(module: Any, dense: bool, experts: bool, in_experts: bool) -> Any:
    if module is WrappedTorchNorm:
        return SequenceParallelTorchNorm
    if module in _FORGE_TWIN and (experts if in_experts else dense):
        return _FORGE_TWIN[module]
    return module


def _refuse_unsupported(module: Any) -> None:
    origin = getattr(module, "__module__", "") or ""
    if origin.startswith(("megatron.core.extensions", "transformer_engine")):
        raise ValueError(
            f"{module.__name__}: Transformer Engine specs are out of scope for FORGE; build the model from "
            "get_gpt_layer_local_spec / get_gpt_decoder_block_spec(use_transformer_engine=False)"
        )
    if getattr(module, "__name__", "") in ("GroupedMLP", "TEGroupedMLP"):
        raise ValueError(
            f"{module.__name__}: grouped-GEMM experts need Transformer Engine or grouped_gemm; FORGE steps "
            "SequentialMLP experts: set moe_grouped_gemm=False (drop --moe-grouped-gemm)"
        )


def _megatron_moe_without_transformer_engine() -> None:
    """megatron-core 0.16.1's MoE router gating reads ``moe_utils.te_general_gemm``, which is
    only defined when Transformer Engine imports (a NameError without TE, i.e. on every
    SequentialMLP model FORGE steps): define it as None, selecting the router's torch path."""
    if not hasattr(moe_utils, "te_general_gemm"):
        moe_utils.te_general_gemm = None


def get_forge_gpt_layer_local_spec(
    num_experts: int | None = None,
    qk_layernorm: bool = True,
    normalization: str = "RMSNorm",
    *,
    dense: bool = True,
    experts: bool = True,
    **kwargs: Any,
) -> ModuleSpec:
    """``get_gpt_layer_local_spec`` (Qwen3 defaults: qk-norm, RMSNorm) with FORGE linears."""
    if num_experts:
        _megatron_moe_without_transformer_engine()
    spec = get_gpt_layer_local_spec(num_experts=num_experts, qk_layernorm=qk_layernorm,
                                    normalization=normalization, **kwargs)
    return forge_spec(spec, dense=dense, experts=experts)


def get_forge_gpt_decoder_block_spec(
    config: TransformerConfig,
    normalization: str = "RMSNorm",
    *,
    dense: bool = True,
    experts: bool = True,
    vp_stage: int | None = None,
    pp_rank: int | None = None,
) -> TransformerBlockSubmodules:
    """``get_gpt_decoder_block_spec`` (local modules; dense and MoE layers per ``config``,
    final norm included) with FORGE linears."""
    if config.num_moe_experts:
        _megatron_moe_without_transformer_engine()
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=False, normalization=normalization,
                                      vp_stage=vp_stage, pp_rank=pp_rank)
    return forge_spec(spec, dense=dense, experts=experts)


def use_forge_output_layer(model: Any) -> None:
    """Replace ``model.output_layer`` (a hard-coded ``ColumnParallelLinear`` in ``GPTModel``)
    by its FORGE twin sharing the same weight. Call right after building the model.

    Refuses a tied output layer (its weight is also the embedding's) and
    multi-token prediction (the output layer runs once per MTP depth).
    """
    if getattr(model, "share_embeddings_and_output_weights", False):
        raise ValueError(
            "the output layer is tied to the word embedding (share_embeddings_and_output_weights=True): a weight "
            "read twice per step cannot be fused. Build GPTModel with share_embeddings_and_output_weights=False "
            "(--untie-embeddings-and-output-weights) or leave the output layer stock"
        )
    if getattr(model.config, "mtp_num_layers", None):
        raise ValueError(
            "multi-token prediction runs the output layer once per depth, so its weight is read several times "
            "per step and cannot be fused: leave the output layer stock or set mtp_num_layers=None"
        )
    if getattr(model, "output_layer", None) is not None:  # absent on pipeline stages without post_process
        model.output_layer = ForgeColumnParallelLinear.from_stock(model.output_layer)
