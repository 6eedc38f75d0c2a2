"""FORGE's command-line flags for Megatron-LM (``extra_args_provider``) and the
FORGE pieces built from the parsed arguments.

    from forge_mcore.tensor_parallel import add_forge_args, forge_config_from_args
    pretrain(..., extra_args_provider=add_forge_args)
    forge_config = forge_config_from_args(get_args())  # refuses unsupported setups up front
"""

from __future__ import annotations

import argparse

from ..codecs import available_codecs
from ..rules import available_rules
from .config import CLIP_MODES, ForgeMegatronConfig, check_forge_setup

SCOPES = {"all": (True, True), "dense": (True, False), "experts": (False, True)}


def add_forge_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the FORGE flags; returns ``parser`` (Megatron-LM's ``extra_args_provider`` contract)."""
    group = parser.add_argument_group(title="FORGE (optimizer step fused into the weight-gradient GEMM)")
    group.add_argument("--forge-optimizer", type=str.lower, default=None, choices=available_rules(),
                       help="Rule for the fused weights. Default: the one matching --optimizer "
                            "(adam with decoupled weight decay -> adamw).")
    group.add_argument("--forge-state-dtype", default="auto", choices=["auto", *available_codecs()],
                       help="Optimizer-state dtype of the fused weights. auto: fp32 with --bf16 (megatron's "
                            "fp32-master recipe), else the weights' dtype.")
    group.add_argument("--forge-clip", default="none", choices=CLIP_MODES,
                       help="How --clip-grad reaches the fused weights: none (refuse --clip-grad > 0), exact "
                            "(materialize their gradients in fp32; exact), previous (previous step's clip "
                            "coefficient; no memory).")
    group.add_argument("--forge-scope", default="all", choices=sorted(SCOPES),
                       help="Which linears are fused: all, dense (attention, MLP, output layer) or experts.")
    return parser


def forge_config_from_args(args: argparse.Namespace) -> ForgeMegatronConfig:
    """The ``ForgeMegatronConfig`` of Megatron-LM's parsed ``args`` (after its ``validate_args``).

    Refuses (ValueError, naming the flag to change) every setup FORGE cannot run,
    before any model or optimizer exists.
    """
    dense, experts = SCOPES[args.forge_scope]
    forge = ForgeMegatronConfig(optimizer=args.forge_optimizer, state_dtype=args.forge_state_dtype,
                                clip=args.forge_clip, dense=dense, experts=experts)
    pipeline = args.pipeline_model_parallel_size
    expert_tp = getattr(args, "expert_tensor_parallel_size", None) or args.tensor_model_parallel_size
    expert_dp = args.world_size // (expert_tp * getattr(args, "expert_model_parallel_size", 1) * pipeline)
    check_forge_setup(
        forge, fp16=args.fp16, loss_scale=args.loss_scale, clip_grad=args.clip_grad,
        data_parallel_size=args.data_parallel_size, context_parallel_size=args.context_parallel_size,
        expert_data_parallel_size=expert_dp,
        num_microbatches=args.global_batch_size // (args.micro_batch_size * args.data_parallel_size),
        delay_wgrad_compute=getattr(args, "delay_wgrad_compute", False),
        calculate_per_token_loss=getattr(args, "calculate_per_token_loss", False),
        has_dense=dense, has_experts=experts and bool(getattr(args, "num_experts", None)),
    )
    return forge
