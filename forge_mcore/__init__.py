"""forge_mcore: the optimizer step fused into the weight-gradient GEMM.

Core API (placements build on it):

* ``ForgeParamState.create(weight, rule, group, state_dtype, weight_store)`` --
  a managed weight's optimizer state;
* ``fused_wgrad_step(grad_output, input, weight, state, hyper)`` -- one fused
  step (Triton on CUDA, the torch reference on CPU);
* ``get_rule`` / ``available_rules``, ``get_codec`` / ``available_codecs``,
  ``get_weight_store`` / ``available_weight_stores``.
"""

from .codecs import available_codecs, available_weight_stores, get_codec, get_weight_store
from .ops import StepTelemetry, fused_wgrad_step
from .param_state import ForgeParamState
from .rules import Rule, available_rules, get_rule

__version__ = "0.1.0"

__all__ = [
    "ForgeParamState", "Rule", "StepTelemetry", "available_codecs", "available_rules",
    "available_weight_stores", "fused_wgrad_step", "get_codec", "get_rule", "get_weight_store",
]
