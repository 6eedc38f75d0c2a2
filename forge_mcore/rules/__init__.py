"""Optimizer rules: one file per family, all registered by name.

``get_rule("adamw")`` returns the rule; ``available_rules()`` lists them.
"""

from . import adagrad, adam, adamax, lion, nadam, radam, rmsprop, sgd  # noqa: F401  (registration)
from .base import MAX_STATE_SLOTS, Rule, StateSpec, available_rules, get_rule, register

__all__ = ["MAX_STATE_SLOTS", "Rule", "StateSpec", "available_rules", "get_rule", "register"]
