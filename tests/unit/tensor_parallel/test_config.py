"""How megatron's OptimizerConfig and command-line arguments map onto FORGE's settings."""

from __future__ import annotations

import pytest
import torch
from megatron.core.optimizer import OptimizerConfig

from forge_mcore.rules import get_rule
from forge_mcore.tensor_parallel import ForgeMegatronConfig, forge_config_from_args
from forge_mcore.tensor_parallel.config import rule_hyperparameters

from .common import megatron_args


def test_rule_hyperparameters_come_from_every_optimizer_config_field():
    # every value off megatron's defaults (and off the rules' defaults)
    config = OptimizerConfig(optimizer="adam", lr=0.03, weight_decay=0.07, adam_beta1=0.8, adam_beta2=0.95,
                             adam_eps=1e-5, sgd_momentum=0.7)
    assert rule_hyperparameters(get_rule("adamw"), config) == dict(lr=0.03, weight_decay=0.07, betas=(0.8, 0.95),
                                                                   eps=1e-5)
    assert rule_hyperparameters(get_rule("sgd"), config) == dict(lr=0.03, weight_decay=0.07, momentum=0.7)


def test_the_rule_follows_megatrons_optimizer_choice():
    rule = lambda **kw: ForgeMegatronConfig().rule(OptimizerConfig(**kw)).name  # noqa: E731
    assert rule(optimizer="adam", decoupled_weight_decay=True) == "adamw"
    assert rule(optimizer="adam", decoupled_weight_decay=False) == "adam"  # L2 weight decay in the gradient
    assert rule(optimizer="sgd") == "sgd"
    assert ForgeMegatronConfig(optimizer="lion").rule(OptimizerConfig(optimizer="adam")).name == "lion"


def test_auto_state_dtype_is_fp32_under_megatrons_fp32_master_recipe():
    resolved = lambda state, bf16, dtype: ForgeMegatronConfig(state_dtype=state).resolved_state_dtype(  # noqa: E731
        OptimizerConfig(bf16=bf16), dtype)
    assert resolved("auto", True, torch.bfloat16) == "fp32"  # --bf16: fp32 master and moments
    assert resolved("auto", False, torch.bfloat16) == "bf16"  # the bf16-state recipe
    assert resolved("auto", False, torch.float32) == "fp32"
    assert resolved("int8", True, torch.bfloat16) == "int8"


def test_every_forge_flag_reaches_the_config():
    config = forge_config_from_args(megatron_args("--forge-state-dtype", "int8", "--forge-optimizer", "lion"))
    assert (config.state_dtype, config.optimizer) == ("int8", "lion")
    scopes = {scope: forge_config_from_args(megatron_args("--forge-scope", scope))
              for scope in ("all", "dense", "experts")}
    assert {scope: (c.dense, c.experts) for scope, c in scopes.items()} == {
        "all": (True, True), "dense": (True, False), "experts": (False, True)}


def test_only_forge_clip_exact_accepts_several_micro_batches():
    two = dict(clip_grad=1.0, global_batch_size=8)  # micro-batch 4: two per step
    assert forge_config_from_args(megatron_args("--forge-clip", "exact", **two)).clip == "exact"
    with pytest.raises(ValueError, match="2 micro-batches"):  # previous steps inside each backward
        forge_config_from_args(megatron_args("--forge-clip", "previous", **two))
