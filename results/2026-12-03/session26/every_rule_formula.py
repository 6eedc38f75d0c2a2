"""Session 26: how many of call 4's every-rule GPU cases (the seven-deep tile-ring config, every rule
case, bf16 and int8 states) the test's old shared-memory formula (a buffer per consumer) got wrong
against ``gluon_wgrad.applies`` (three column halves). CPU only:

    python results/2026-12-03/session26/every_rule_formula.py      # -> "30 cases, 12 mismatch"
"""

import torch

import forge_mcore as fm
from forge_mcore.kernels import gluon_wgrad
from forge_mcore.kernels.configs import CONFIGS
from tests.unit.cases import RULE_CASES

config = next(c for c in CONFIGS if c.tile_ring and c.num_stages == 7 and not c.fast_division)
cases = mismatches = 0
for rule, group in RULE_CASES:
    for codec in ("bf16", "int8"):
        probe = fm.ForgeParamState.create(torch.empty(64, 128).bfloat16(), rule, group, codec, "bf16")
        applies = gluon_wgrad.applies(config, probe, torch.empty(1, dtype=torch.bfloat16), None, True, True)
        tile_bytes = 2 + sum(s.data.element_size() for s in probe.slots if s is not None)
        old = (config.smem_bytes(2) + config.epilogue_stages * config.guard_tile[0] * config.block_n * tile_bytes
               <= gluon_wgrad.SMEM_LIMIT)
        cases += 1
        mismatches += applies != old
print(f"{cases} cases, {mismatches} mismatch")
