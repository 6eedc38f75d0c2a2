"""FORGE's settings for a megatron-core model, and the setups it refuses.

Every refusal is raised before anything is written (at argument parsing, model
construction or optimizer construction) and names what to change, in
megatron's own terms (config field and command-line flag).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from megatron.core.optimizer import OptimizerConfig

from ..codecs import available_codecs
from ..rules import Rule, available_rules, get_rule

CLIP_MODES = ("none", "exact", "previous")


@dataclass
class ForgeMegatronConfig:
    """How FORGE steps the fused weights of a megatron-core model."""

    optimizer: str | None = None
    """The rule (``forge_mcore.rules.available_rules()``). None: the rule matching the
    OptimizerConfig (adam with decoupled_weight_decay -> adamw, adam -> adam, sgd -> sgd)."""

    state_dtype: str = "auto"
    """Optimizer-state codec (fp32, bf16, int8, fp8). "auto": fp32 when the OptimizerConfig
    keeps fp32 master weights (``bf16=True``: megatron's fp32-master recipe), else the
    weights' own dtype (the bf16-state recipe)."""

    clip: str = "none"
    """Global-norm clipping of the fused weights when ``OptimizerConfig.clip_grad > 0``.
    "none": refuse clip_grad > 0. "exact": the fused weights' gradients are materialized in
    fp32 during backward and stepped at ``step()`` with megatron's clip coefficient (exact;
    costs the gradient memory FORGE otherwise saves). "previous": each backward's fused
    step is scaled by the clip coefficient of the previous iteration (no memory; one step
    stale; the first iteration is unclipped)."""

    dense: bool = True
    """Fuse the dense linears (attention, dense MLP, shared experts, untied output layer)."""

    experts: bool = True
    """Fuse the experts of ``SequentialMLP`` MoE layers."""

    def __post_init__(self) -> None:
        if self.optimizer is not None and self.optimizer.lower() not in available_rules():
            raise ValueError(f"ForgeMegatronConfig.optimizer={self.optimizer!r}: choose one of {available_rules()}")
        if self.state_dtype != "auto" and self.state_dtype not in available_codecs():
            raise ValueError(
                f"ForgeMegatronConfig.state_dtype={self.state_dtype!r}: choose 'auto' or one of {available_codecs()}"
            )
        if self.clip not in CLIP_MODES:
            raise ValueError(f"ForgeMegatronConfig.clip={self.clip!r}: choose one of {CLIP_MODES}")

    def rule(self, optimizer_config: OptimizerConfig) -> Rule:
        """The rule to run: the configured one, else megatron's optimizer choice."""
        if self.optimizer is not None:
            return get_rule(self.optimizer)
        if optimizer_config.optimizer == "adam":
            return get_rule("adamw" if optimizer_config.decoupled_weight_decay else "adam")
        if optimizer_config.optimizer == "sgd":
            return get_rule("sgd")
        raise ValueError(
            f"OptimizerConfig.optimizer={optimizer_config.optimizer!r} has no FORGE rule: pass "
            f"--forge-optimizer (ForgeMegatronConfig.optimizer), one of {available_rules()}"
        )

    def resolved_state_dtype(self, optimizer_config: OptimizerConfig, weight_dtype: torch.dtype) -> str:
        if self.state_dtype != "auto":
            return self.state_dtype
        if optimizer_config.bf16 or weight_dtype == torch.float32:
            return "fp32"
        return "bf16"


def rule_hyperparameters(rule: Rule, optimizer_config: OptimizerConfig) -> dict:
    """The rule's hyperparameters taken from megatron's OptimizerConfig (lr and weight
    decay are then driven by OptimizerParamScheduler, as for megatron's own optimizer)."""
    hparams = {"lr": optimizer_config.lr if optimizer_config.lr is not None else rule.defaults["lr"],
               "weight_decay": optimizer_config.weight_decay}
    if "betas" in rule.defaults:
        hparams["betas"] = (optimizer_config.adam_beta1, optimizer_config.adam_beta2)
    if "eps" in rule.defaults:
        hparams["eps"] = optimizer_config.adam_eps
    if rule.name == "sgd":
        hparams["momentum"] = optimizer_config.sgd_momentum
    return hparams


def check_forge_setup(
    forge: ForgeMegatronConfig,
    *,
    fp16: bool,
    loss_scale: float | None,
    clip_grad: float,
    data_parallel_size: int,
    context_parallel_size: int,
    expert_data_parallel_size: int,
    num_microbatches: int | None,
    delay_wgrad_compute: bool,
    calculate_per_token_loss: bool,
    has_dense: bool,
    has_experts: bool,
) -> None:
    """Raise ValueError, naming what to change, for a setup FORGE cannot run exactly."""
    if fp16 or loss_scale is not None:
        raise ValueError(
            "FORGE steps the fused weights inside backward, so a loss scaler can neither unscale their gradients "
            "nor skip an overflowing step: train in bf16 (--bf16, OptimizerConfig.bf16=True) without "
            f"--fp16 and --loss-scale (got fp16={fp16}, loss_scale={loss_scale})"
        )
    if calculate_per_token_loss:
        raise ValueError(
            "calculate_per_token_loss=True divides the gradients by the token count after backward "
            "(finalize_model_grads), when the fused weights have already been stepped: turn off "
            "--calculate-per-token-loss"
        )
    if delay_wgrad_compute:
        raise ValueError(
            "delay_wgrad_compute=True defers weight gradients to backward_dw(), but FORGE consumes them inside "
            "backward: turn off --delay-wgrad-compute"
        )
    if clip_grad > 0 and forge.clip == "none":
        raise ValueError(
            f"clip_grad={clip_grad} (--clip-grad) needs a FORGE clipping mode, since the global norm is only known "
            "after the fused weights' backward: pass --forge-clip exact (materialize their gradients: exact, "
            "costs the gradient memory) or --forge-clip previous (scale by the previous step's clip "
            "coefficient), or set --clip-grad 0"
        )
    if has_dense and data_parallel_size * context_parallel_size > 1:
        raise ValueError(
            f"data-parallel size {data_parallel_size} x context-parallel size {context_parallel_size} > 1 with "
            "FORGE dense weights: their local gradients are partial sums that must be reduced before the step "
            "(paper Prop. 2(ii)) and the FORGE coordinator does not exist yet. Use data- and context-parallel "
            "size 1 (tensor, pipeline and expert parallelism are exact), or keep the dense linears stock "
            "(--forge-scope experts, ForgeMegatronConfig.dense=False)"
        )
    if has_experts and expert_data_parallel_size > 1:
        raise ValueError(
            f"expert data-parallel size {expert_data_parallel_size} > 1 with FORGE experts: each expert's "
            "gradient is a partial sum over its replicas. Raise --expert-model-parallel-size until every expert "
            "lives on one rank, or keep the experts stock (--forge-scope dense, ForgeMegatronConfig.experts=False)"
        )
    deferred = clip_grad > 0 and forge.clip == "exact"  # gradients materialized, stepped at step()
    if num_microbatches is not None and num_microbatches > 1 and not deferred:
        raise ValueError(
            f"{num_microbatches} micro-batches per step: FORGE steps each fused weight in its backward, so a "
            "later micro-batch would read weights already updated. Use one micro-batch per step "
            "(--global-batch-size = --micro-batch-size x data-parallel size), or --forge-clip exact with "
            "--clip-grad > 0 (the fused gradients are accumulated in fp32 and stepped at step(): exact, costs "
            "the gradient memory), until exact accumulation is wired for pipelines"
        )
