"""The fused weights of megatron-core model chunks as a megatron optimizer.

``ForgeMegatronOptimizer`` owns a ``ForgeEngine``: when it is built it finds
every FORGE linear in the model chunks, allocates the optimizer state of its
weight (and bias) and binds the layer to the engine. Build it after the model
is final (Float16Module, DDP, device moves): the engine holds the weights'
storage. ``get_megatron_optimizer_with_forge`` builds it and chains it after
``get_megatron_optimizer``'s optimizers in one ``ChainedOptimizer``, so:

* ``OptimizerParamScheduler`` drives the fused step's lr and weight decay: the
  engine's groups are this optimizer's ``param_groups`` and carry megatron's
  keys (``max_lr``, ``min_lr``, ``wd_mult``, ``lr_mult``, ``is_expert_parallel``,
  ``is_decoupled_lr``, ``default_config``), grouped by megatron's own
  ``config_overrides`` rules (no weight decay on biases; the decoupled lr of
  the output layer); the kernel reads them when the next backward starts.
* ``step()`` keeps megatron's semantics and return value
  ``(update_successful, grad_norm, num_zeros_in_grad)``: the fused weights were
  stepped during backward; ``step()`` finishes the iteration (deferred steps,
  experts no token reached) and its grad norm includes the fused weights, from
  the kernels' telemetry.
* clipping: megatron clips every chained optimizer with
  ``clip_grad_by_total_norm_fp32(get_parameters(), ...)``. This optimizer's only
  "parameter" is a one-element carrier whose ``.grad`` is reset to 1 before each
  step, so afterwards it holds megatron's coefficient min(1, clip/(norm + 1e-6)),
  on device, which the chosen ``ForgeMegatronConfig.clip`` mode applies.
* its state enters ``sharded_state_dict`` as one object per rank (save and load
  at the same parallel layout; resharding is not supported yet).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from megatron.core import parallel_state
from megatron.core.dist_checkpointing.mapping import ShardedObject, ShardedStateDict
from megatron.core.num_microbatches_calculator import get_num_microbatches
from megatron.core.optimizer import (
    ChainedOptimizer,
    MegatronOptimizer,
    OptimizerConfig,
    get_megatron_optimizer,
    get_standard_config_overrides,
)
from megatron.core.optimizer_param_scheduler import combine_param_group_overrides, param_group_override_to_tuple
from megatron.core.tensor_parallel import param_is_not_tensor_parallel_duplicate
from megatron.core.tensor_parallel.layers import RowParallelLinear
from megatron.core.transformer.module import param_is_not_shared
from megatron.core.utils import get_model_config

from ..engine import ForgeEngine
from .config import ForgeMegatronConfig, check_forge_setup, rule_hyperparameters
from .layers import ForgeBinding, ForgeParallelLinear


def forge_layers(model_chunks: list[torch.nn.Module]) -> list[tuple[str, ForgeParallelLinear]]:
    """(name, layer) of every FORGE linear, names relative to the unwrapped model (chunk-prefixed
    when there are several chunks): stable under DDP / Float16Module wrapping."""
    found = []
    for index, chunk in enumerate(model_chunks):
        while isinstance(getattr(chunk, "module", None), torch.nn.Module):  # DDP, Float16Module
            chunk = chunk.module
        prefix = f"chunk{index}." if len(model_chunks) > 1 else ""
        found += [(prefix + name, m) for name, m in chunk.named_modules() if isinstance(m, ForgeParallelLinear)]
    return found


def _num_microbatches() -> int | None:
    try:
        return get_num_microbatches()
    except AttributeError:  # the calculator is not set up (megatron-core used without Megatron-LM)
        return None


class ForgeMegatronOptimizer(MegatronOptimizer):
    """The FORGE member of a megatron ``ChainedOptimizer`` (see the module docstring).

    config: megatron's OptimizerConfig (the same object the chained optimizers use).
    model_chunks: the model chunks, already wrapped and on their device.
    forge_config: the rule, state dtype, clipping mode and scope.
    config_overrides: megatron's per-parameter group overrides (None: megatron's standard ones).
    num_microbatches: micro-batches per step (None: megatron's calculator, if set up).
    """

    def __init__(
        self,
        config: OptimizerConfig,
        model_chunks: list[torch.nn.Module],
        forge_config: ForgeMegatronConfig | None = None,
        *,
        config_overrides: dict | None = None,
        num_microbatches: int | None = None,
    ) -> None:
        forge_config = forge_config or ForgeMegatronConfig()
        layers = forge_layers(model_chunks)
        for name, layer in layers:
            if not (forge_config.experts if layer.is_expert else forge_config.dense):
                kind = "experts" if layer.is_expert else "dense"
                raise ValueError(f"{name} is a FORGE linear but ForgeMegatronConfig.{kind}=False: build the model "
                                 f"from a spec with {kind}=False, or enable it")
        model_config = get_model_config(model_chunks[0])
        ddp_delay = getattr(getattr(model_chunks[0], "ddp_config", None), "delay_wgrad_compute", False)
        check_forge_setup(
            forge_config, fp16=config.fp16, loss_scale=config.loss_scale, clip_grad=config.clip_grad,
            data_parallel_size=parallel_state.get_data_parallel_world_size(),
            context_parallel_size=parallel_state.get_context_parallel_world_size(),
            expert_data_parallel_size=parallel_state.get_expert_data_parallel_world_size(),
            num_microbatches=num_microbatches if num_microbatches is not None else _num_microbatches(),
            delay_wgrad_compute=model_config.delay_wgrad_compute or ddp_delay,
            calculate_per_token_loss=model_config.calculate_per_token_loss,
            has_dense=any(not layer.is_expert for _, layer in layers),
            has_experts=any(layer.is_expert for _, layer in layers),
        )
        dtypes = {layer.weight.dtype for _, layer in layers}
        if len(dtypes) > 1:
            raise ValueError(f"FORGE linears with mixed weight dtypes {sorted(map(str, dtypes))}: use one params_dtype")
        weight_dtype = dtypes.pop() if dtypes else torch.float32
        rule = forge_config.rule(config)
        clipped = config.clip_grad > 0
        engine = ForgeEngine(rule, forge_config.resolved_state_dtype(config, weight_dtype),
                             "fp32_master" if config.bf16 and weight_dtype == torch.bfloat16 else None,
                             deferred=clipped and forge_config.clip == "exact")
        super().__init__(engine, config)
        self.engine = engine
        self.forge_config = forge_config
        self.is_stub_optimizer = not layers
        self.tp_group = parallel_state.get_tensor_model_parallel_group()
        self._dense_group = parallel_state.get_model_parallel_group()
        self._expert_group = parallel_state.get_expert_tensor_model_pipeline_parallel_group()
        # Which group reduces the grad statistics must not depend on the rank (a pipeline stage may
        # hold no experts), or chained optimizers would take different collective paths.
        self.grad_stats_parallel_group = self._expert_group if model_config.num_moe_experts else self._dense_group
        if layers:
            device = layers[0][1].weight.device
        else:
            device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else "cpu"
        self._scale_one = torch.ones(1, dtype=torch.float32, device=device)
        self._carrier = torch.zeros(1, dtype=torch.float32, device=device)
        self._carrier.grad = torch.ones(1, dtype=torch.float32, device=device)
        self._carrier.decoupled_grad = self._carrier.grad  # read by clipping under the precision-aware optimizer
        engine.accumulation_advice = (
            "FORGE's megatron optimizer takes one micro-batch per step: run the schedule with "
            "num_microbatches=1 (--global-batch-size = --micro-batch-size x data-parallel size), or "
            "--forge-clip exact with --clip-grad > 0 (gradients accumulated in fp32). Pass num_microbatches= to "
            "get_megatron_optimizer_with_forge so that this is refused when the optimizer is built")
        # config_overrides match the names megatron's _get_param_groups sees: each chunk's own
        # named_parameters(), wrappers included ("module.decoder..."), no chunk prefix
        megatron_names = {id(p): name for chunk in model_chunks for name, p in chunk.named_parameters()}
        self._bind(layers, megatron_names, config, config_overrides, rule_hyperparameters(rule, config))

    # ---- construction --------------------------------------------------------
    def _bind(self, layers, megatron_names, config, config_overrides, hparams) -> None:
        overrides = get_standard_config_overrides(config) if config_overrides is None else config_overrides
        groups: dict[tuple, dict] = {}
        # The kernel folds DDP's gradient averaging in: experts see tokens from every
        # data-parallel rank and megatron scales their gradients by 1/dp (dense: dp == 1).
        dp_scale = 1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)
        norm_weights = {"dense": [], "expert": []}
        for name, layer in layers:
            handles = []
            for suffix, param in (("weight", layer.weight), ("bias", layer.bias)):
                if param is None:
                    handles.append(None)
                    continue
                full_name = f"{name}.{suffix}"
                group = self._group(groups, param, megatron_names[id(param)], config, overrides, hparams)
                scale = dp_scale if layer.is_expert else 1.0
                handles.append(self.engine.manage(
                    full_name, param.data.view(param.shape[0], -1), param, group,
                    step_when_unused=layer.is_expert, grad_scale=scale,
                ))
                # the norm counts a TP-replicated bias once, and the gradient the rule sees
                counted = param_is_not_shared(param) and param_is_not_tensor_parallel_duplicate(param, layer.tp_group)
                own = "expert" if layer.is_expert else "dense"
                for kind, weights in norm_weights.items():
                    weights.append(scale * scale if counted and kind == own else 0.0)
            reduce_bias = (isinstance(layer, RowParallelLinear) and layer.sequence_parallel
                           and not layer.explicit_expert_comm and layer.tp_group.size() > 1)
            layer.forge_bind(ForgeBinding(self.engine, handles[0], handles[1],
                                          layer.tp_group if reduce_bias else None))
        self._norm_weights = {kind: torch.tensor(values, dtype=torch.float32, device=self._carrier.device)
                              for kind, values in norm_weights.items()}

    def _group(self, groups, param, name, config, overrides, hparams) -> dict:
        """The engine group of ``param``, keyed as megatron's ``_get_param_groups`` keys its groups."""
        matched = [override for key, override in overrides.items() if key.matches(param, name)]
        override = combine_param_group_overrides(matched) if matched else None
        is_expert_parallel = not getattr(param, "allreduce", True)
        key = (param_group_override_to_tuple(override), is_expert_parallel)
        if key not in groups:
            group = self.engine.add_param_group(hparams)
            override = override or {}
            group.update({
                "is_expert_parallel": is_expert_parallel,
                "default_config": not any("lr" in k for k in override),
                "wd_mult": 1.0, "lr_mult": 1.0, "is_decoupled_lr": False,
                "max_lr": config.lr, "min_lr": config.min_lr,
                **override,
            })
            groups[key] = group
        return groups[key]

    # ---- megatron's optimizer interface ------------------------------------------
    def get_parameters(self) -> list[torch.Tensor]:
        """The clip-coefficient carrier (see the module docstring); the fused weights have no .grad."""
        return [self._carrier]

    def _sumsq(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Local (dense, expert) sums of g^2 of this iteration: TP duplicates counted once, DDP's
        expert scaling applied. Device scalars, no sync. After ``step()``, until the next
        backward, those of the iteration just stepped, scaled by its clip coefficient, as
        megatron's main_grads hold them then."""
        if self.engine.last_sumsq is not None and not self.engine.backward_since_step:
            sumsq = self.engine.last_sumsq * self._carrier.grad.square()
        else:
            sumsq = self.engine.per_tensor_sumsq()
        return (sumsq * self._norm_weights["dense"]).sum(), (sumsq * self._norm_weights["expert"]).sum()

    def get_main_grads_for_grad_norm(self) -> list[torch.Tensor]:
        # A chained optimizer sharing grad_stats_parallel_group reduces this list's squared
        # norm over that group; a single tensor sqrt(sumsq) carries the fused weights' part.
        dense, expert = self._sumsq()
        return [(dense + expert).sqrt().view(1)]

    @torch.no_grad()
    def get_grad_norm(self) -> float:
        dense, expert = self._sumsq()
        dist.all_reduce(dense, group=self._dense_group)
        dist.all_reduce(expert, group=self._expert_group)
        return math.sqrt((dense + expert).item())

    def count_zeros(self) -> float:
        """0: a fused weight's gradient is never materialized, so its zeros are not counted."""
        return 0.0

    def prepare_grads(self) -> bool:
        self._carrier.grad.fill_(1.0)
        return False  # non-finite tiles were skipped in the kernel (engine.nonfinite_report())

    def step_with_ready_grads(self) -> bool:
        clip = self.config.clip_grad > 0 and self.forge_config.clip
        if clip == "exact":
            self.engine.grad_scale = self._carrier.grad.clone()
        self.engine.step()
        if clip == "previous":
            self.engine.grad_scale = self._carrier.grad.clone()  # scales the next backward's fused steps
        return True

    @torch.no_grad()
    def step(self) -> tuple[bool, float, float | None]:
        """Megatron's step: (update_successful, grad_norm, num_zeros_in_grad), for this optimizer alone."""
        if self.prepare_grads():
            return False, None, None
        grad_norm = self.get_grad_norm()
        if self.config.clip_grad > 0:
            self._carrier.grad.mul_(min(1.0, self.config.clip_grad / (grad_norm + 1.0e-6)))
        num_zeros = self.count_zeros() if self.config.log_num_zeros_in_grad else None
        return self.step_with_ready_grads(), grad_norm, num_zeros

    def zero_grad(self, set_to_none: bool = True) -> None:
        """The fused weights have no ``.grad``; gradients of this iteration not yet stepped
        (``--forge-clip exact``) are dropped."""
        self.engine.zero_grad()

    def get_loss_scale(self) -> torch.Tensor:
        return self._scale_one

    def reload_model_params(self, state_dict: Any = None) -> None:
        """Refresh the fp32 masters from the weights (after loading a model without its optimizer)."""
        assert state_dict is None, "Initialize main params from state dict is not supported"
        with torch.no_grad():
            for handle in self.engine.managed:
                if handle.state.master is not None:
                    handle.state.master.copy_(handle.weight)

    @property
    def state(self) -> dict:
        return {handle.param: handle.state for handle in self.engine.managed}

    def state_dict(self) -> dict:
        return {"forge": {
            "engine": self.engine.state_dict(),
            "grad_scale": self.engine.grad_scale,
            "param_groups": [{k: v for k, v in g.items() if k != "params"} for g in self.engine.param_groups],
        }}

    def load_state_dict(self, state_dict: dict) -> None:
        self.checked_load(state_dict)()

    def checked_load(self, state_dict: dict) -> Callable[[], None]:
        """Check ``state_dict`` (from ``state_dict()``) whole and return the function that loads
        it: nothing is written before it is called (``ForgeChainedOptimizer`` checks first)."""
        try:
            saved = state_dict["forge"]
            groups, scale = list(saved["param_groups"]), saved["grad_scale"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a FORGE optimizer state_dict ({e!r}): load what state_dict() saved") from None
        if len(groups) != len(self.engine.param_groups):
            raise ValueError(f"FORGE state has {len(groups)} param groups, this model has "
                             f"{len(self.engine.param_groups)}: load at the layout it was saved with")
        load_engine = self.engine.checked_load(saved["engine"])

        def load() -> None:
            load_engine()
            self.engine.grad_scale = scale.to(self._carrier.device) if scale is not None else None
            for group, hparams in zip(self.engine.param_groups, groups):
                group.update(hparams)

        return load

    def sharded_state_dict(self, model_sharded_state_dict: ShardedStateDict, is_loading: bool = False,
                           metadata: dict | None = None) -> ShardedStateDict:
        """One object per rank: every rank's fused weights are its own (no data parallelism)."""
        rank, world = dist.get_rank(), dist.get_world_size()
        return {"forge": ShardedObject("optimizer.forge.state", self.state_dict()["forge"], (world,), (rank,),
                                       replica_id=0)}

    def offload_to_cpu(self) -> None:
        raise NotImplementedError("FORGE keeps the fused weights' state in place; offloading it is not supported")

    restore_from_cpu = offload_to_cpu


class ForgeChainedOptimizer(ChainedOptimizer):
    """megatron's ``ChainedOptimizer`` with FORGE's member last. Where a member could refuse
    after the ones before it acted, FORGE's checks run first: a state_dict it would refuse
    leaves every member unloaded, and CPU offloading (which it does not support) moves none."""

    def load_state_dict(self, state_dict: Any) -> None:
        if len(self.chained_optimizers) == 1:
            forge_part = state_dict
        elif isinstance(state_dict, dict):  # megatron's sharded load keys the members in order
            forge_part = state_dict[max(state_dict)]
        else:
            forge_part = state_dict[-1]
        self.chained_optimizers[-1].checked_load(forge_part)  # raises before any member loads
        super().load_state_dict(state_dict)

    def offload_to_cpu(self) -> None:
        self.chained_optimizers[-1].offload_to_cpu()  # refuses before any member moves
        super().offload_to_cpu()


def chain_forge_optimizer(megatron_optimizer: MegatronOptimizer,
                          forge_optimizer: ForgeMegatronOptimizer) -> ForgeChainedOptimizer:
    """One ``ChainedOptimizer``: megatron's optimizers (flattened), then FORGE's."""
    parts = (megatron_optimizer.chained_optimizers if isinstance(megatron_optimizer, ChainedOptimizer)
             else [megatron_optimizer])
    return ForgeChainedOptimizer([*parts, forge_optimizer])


def get_megatron_optimizer_with_forge(
    config: OptimizerConfig,
    model_chunks: list[torch.nn.Module],
    forge_config: ForgeMegatronConfig | None = None,
    *,
    config_overrides: dict | None = None,
    num_microbatches: int | None = None,
    **kwargs: Any,
) -> ForgeChainedOptimizer:
    """``get_megatron_optimizer`` for the stock parameters chained with FORGE's optimizer for
    the fused ones. FORGE's checks run first, before megatron allocates anything."""
    forge = ForgeMegatronOptimizer(config, model_chunks, forge_config, config_overrides=config_overrides,
                                   num_microbatches=num_microbatches)
    return chain_forge_optimizer(get_megatron_optimizer(config, model_chunks, config_overrides, **kwargs), forge)
