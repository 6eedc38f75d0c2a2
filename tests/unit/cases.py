"""Rule configurations shared by the unit tests and the GPU tests.

Each case covers one structural variant of a rule (momentum, nesterov,
centered, amsgrad, coupled/decoupled decay ...). Learning rates are large
enough that a step moves a weight by many fp32 ulps and at least one bf16 ulp,
so an unwritten tile can never pass as "close".
"""

from __future__ import annotations

RULE_CASES: list[tuple[str, dict]] = [
    ("sgd", dict(lr=0.05, weight_decay=0.01)),
    ("sgd", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1)),
    ("rmsprop", dict(lr=0.01, weight_decay=0.01)),
    ("rmsprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("adam", dict(lr=0.01, weight_decay=0.01)),
    ("adam", dict(lr=0.01, amsgrad=True)),
    ("adamw", dict(lr=0.01, weight_decay=0.1)),
    ("adamax", dict(lr=0.01, weight_decay=0.01)),
    ("nadam", dict(lr=0.01, weight_decay=0.01)),
    ("nadam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    # betas (0.9, 0.9): RAdam's rectification switches on at step 6, inside the test window
    ("radam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.01)),
    ("radam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("lion", dict(lr=0.01, weight_decay=0.1)),
]

STEPS = 6


def case_id(case: tuple[str, dict]) -> str:
    rule, group = case
    opts = [k for k in ("momentum", "nesterov", "centered", "amsgrad", "decoupled_weight_decay") if group.get(k)]
    return "-".join([rule, *opts])
