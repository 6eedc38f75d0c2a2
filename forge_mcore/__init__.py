"""forge_mcore: the optimizer step fused into the weight-gradient GEMM.

For any PyTorch model: ``opt = forge_mcore.patch(model, rule="adamw", state_dtype="bf16", lr=...)``,
then ``loss.backward(); opt.step()`` as usual (``forge_mcore.unpatch(model)`` undoes it).
For megatron-core: ``forge_mcore.tensor_parallel``.

Core API (placements build on it):

* ``ForgeParamState.create(weight, rule, group, state_dtype, weight_store)`` --
  a managed weight's optimizer state;
* ``fused_wgrad_step(grad_output, input, weight, state, hyper)`` -- one fused
  step (Triton on CUDA, the torch reference on CPU); ``accumulate_wgrad`` for
  the earlier micro-batches of an exact accumulation;
* ``ForgeEngine`` -- groups, managed weights, telemetry and micro-batches: what
  every placement builds on;
* ``get_rule`` / ``available_rules``, ``get_codec`` / ``available_codecs``,
  ``get_weight_store`` / ``available_weight_stores``.
"""

from .codecs import available_codecs, available_weight_stores, get_codec, get_weight_store
from .engine import ForgeEngine
from .ops import StepTelemetry, accumulate_wgrad, fused_wgrad_step
from .param_state import ForgeParamState
from .rules import Rule, available_rules, get_rule

__version__ = "0.1.0"

# The nn placement imports torch._dynamo (torch.compiler.disable); load it on first use.
_NN_EXPORTS = ("ForgeLinear", "ForgeOptimizer", "patch", "unpatch")


def __getattr__(name: str):
    if name in _NN_EXPORTS:
        from . import nn

        return getattr(nn, name)
    raise AttributeError(f"module 'forge_mcore' has no attribute {name!r}")


__all__ = [
    *_NN_EXPORTS, "ForgeEngine", "ForgeParamState", "Rule", "StepTelemetry", "accumulate_wgrad",
    "available_codecs", "available_rules",
    "available_weight_stores", "fused_wgrad_step", "get_codec", "get_rule", "get_weight_store",
]
