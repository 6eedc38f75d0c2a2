"""HF ``transformers.Trainer`` with a ``patch()``ed model.

Trainer clips with ``accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)`` and
logs that norm. Fused weights have no ``.grad``, so both would silently leave them out:
the clipping of the fused weights and their share of the logged ``grad_norm``.
``ForgeTrainerCallback`` hands both to the FORGE optimizer::

    opt = forge_mcore.patch(model, ..., clip="previous", grad_accumulation=4)
    args = TrainingArguments(..., gradient_accumulation_steps=4, max_grad_norm=0.0)
    trainer = Trainer(model, args, optimizers=(opt, None),   # Trainer builds the lr scheduler on opt
                      callbacks=[ForgeTrainerCallback(opt, max_grad_norm=1.0)])

Trainer's own clipping must be off (``max_grad_norm=0``) and its accumulation must be
``patch()``'s: the callback refuses anything else when training begins, before a step.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from .optimizer import ForgeOptimizer


class ForgeTrainerCallback(TrainerCallback):
    """Clips through ``optimizer.clip_grad_norm_`` (the mode chosen at ``patch()``) before each
    optimizer step, and logs the global norm of fused and unfused gradients as ``grad_norm``.

    optimizer: what ``patch()`` returned, also given to ``Trainer(optimizers=(optimizer, None))``.
    max_grad_norm: the clipping threshold (None: no clipping, the norm is still logged).
    """

    def __init__(self, optimizer: ForgeOptimizer, max_grad_norm: float | None = None) -> None:
        if not isinstance(optimizer, ForgeOptimizer):
            raise TypeError(f"ForgeTrainerCallback takes the optimizer forge_mcore.patch() returned, "
                            f"got {type(optimizer).__name__}")
        if max_grad_norm is not None and optimizer.clip == "none":
            raise ValueError("max_grad_norm needs a clipping mode: patch(..., clip='previous') or clip='exact'")
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if args.max_grad_norm:
            raise ValueError(
                f"TrainingArguments(max_grad_norm={args.max_grad_norm}) clips through "
                "torch.nn.utils.clip_grad_norm_(model.parameters()), which cannot see fused weights: pass "
                "max_grad_norm=0 and give the threshold to ForgeTrainerCallback(optimizer, max_grad_norm=...)"
            )
        accumulation = self.optimizer.engine.grad_accumulation
        if args.gradient_accumulation_steps != accumulation:
            raise ValueError(
                f"TrainingArguments(gradient_accumulation_steps={args.gradient_accumulation_steps}) but "
                f"patch(grad_accumulation={accumulation}): fused weights step once per grad_accumulation "
                "backward passes, so the two must be equal"
            )

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.max_grad_norm is not None:
            self.optimizer.clip_grad_norm_(self.max_grad_norm)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kwargs: Any) -> None:
        """Trainer logged the norm of the unfused gradients alone; the global one replaces it."""
        if logs is None or "grad_norm" not in logs:
            return
        logs["grad_norm"] = self.optimizer.grad_norm().item()  # the step just finished, as Trainer's
        last = state.log_history[-1] if state.log_history else None
        if last is not None and last.get("step") == state.global_step and "grad_norm" in last:
            last["grad_norm"] = logs["grad_norm"]  # Trainer appended its copy before calling back
