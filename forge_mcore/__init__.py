"""forge_mcore: the optimizer step fused into the weight-gradient GEMM.

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

__all__ = [
    "ForgeEngine", "ForgeParamState", "Rule", "StepTelemetry", "accumulate_wgrad", "available_codecs", "available_rules",
    "available_weight_stores", "fused_wgrad_step", "get_codec", "get_rule", "get_weight_store",
]
