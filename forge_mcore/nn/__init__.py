"""The ``nn`` placement: FORGE for any PyTorch model.

* ``patch(model, ...)`` -> ``ForgeOptimizer``; ``unpatch(model)``;
* ``ForgeLinear`` (drop-in ``nn.Linear``) and ``ForgeLinearFunction`` / ``forge_linear``;
* ``linear_cross_entropy``: an LM head fused with its loss (``patch(fused_loss=True)``);
* ``probe_uses``: the autograd probe that decides what may be fused.
"""

from .linear import ForgeLinear, ForgeLinearFunction, FusedSite, forge_linear
from .loss import linear_cross_entropy
from .manager import patch, unpatch
from .optimizer import CLIP_MODES, ForgeOptimizer, PatchReport
from .probe import ModuleUse, probe_uses

__all__ = [
    "CLIP_MODES", "ForgeLinear", "ForgeLinearFunction", "ForgeOptimizer", "FusedSite", "ModuleUse", "PatchReport",
    "forge_linear", "linear_cross_entropy", "patch", "probe_uses", "unpatch",
]
