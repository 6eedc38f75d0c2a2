"""The ``nn`` placement: FORGE for any PyTorch model.

* ``patch(model, ...)`` -> ``ForgeOptimizer``; ``unpatch(model)``;
* ``ForgeLinear`` (drop-in ``nn.Linear``) and ``ForgeLinearFunction`` / ``forge_linear``;
* ``probe_uses``: the autograd probe that decides what may be fused.
"""

from .linear import ForgeLinear, ForgeLinearFunction, FusedSite, forge_linear
from .manager import patch, unpatch
from .optimizer import CLIP_MODES, ForgeOptimizer, PatchReport
from .probe import ModuleUse, probe_uses

__all__ = [
    "CLIP_MODES", "ForgeLinear", "ForgeLinearFunction", "ForgeOptimizer", "FusedSite", "ModuleUse", "PatchReport",
    "forge_linear", "patch", "probe_uses", "unpatch",
]
