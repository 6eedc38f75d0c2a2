"""HF Trainer with a patch()ed model and ForgeTrainerCallback: the fused weights are clipped
and counted in the logged grad_norm; setups Trainer would get wrong are refused up front."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("accelerate", reason="transformers.Trainer needs accelerate (pip install -e .[dev])")
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

import forge_mcore  # noqa: E402
from forge_mcore.models import build_model, example_batch  # noqa: E402
from forge_mcore.nn.hf_trainer import ForgeTrainerCallback  # noqa: E402

LR, MAX_NORM, STEPS = 0.1, 1e-3, 3


class _Rows(torch.utils.data.Dataset):
    def __init__(self, model, n):
        batch = example_batch(model, n, 16, generator=torch.Generator().manual_seed(0))
        self.rows = [{k: v[i] for k, v in batch.items()} for i in range(n)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


class _StepRecorder(TrainerCallback):
    """Every parameter around each optimizer step, and the global norm FORGE saw."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer, self.updates, self.norms = model, optimizer, [], []

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self.before = [p.detach().clone() for p in self.model.parameters()]

    def on_optimizer_step(self, args, state, control, **kwargs):
        delta = [p.detach() - b for p, b in zip(self.model.parameters(), self.before)]
        self.updates.append(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(d) for d in delta])).item())
        self.norms.append(self.optimizer.grad_norm().item())


def _args(tmp_path, **overrides):
    kwargs = dict(output_dir=str(tmp_path), max_steps=STEPS, per_device_train_batch_size=2, logging_steps=1,
                  gradient_accumulation_steps=2, max_grad_norm=0.0, report_to=[], save_strategy="no", use_cpu=True,
                  learning_rate=LR, lr_scheduler_type="constant", seed=0, disable_tqdm=True)
    return TrainingArguments(**{**kwargs, **overrides})


def _trainer(tmp_path, callback_norm=MAX_NORM, **overrides):
    model = build_model("qwen3-tiny", seed=0)
    opt = forge_mcore.patch(model, rule="sgd", state_dtype="fp32", lr=LR, clip="exact", grad_accumulation=2)
    recorder = _StepRecorder(model, opt)
    trainer = Trainer(model=model, args=_args(tmp_path, **overrides), train_dataset=_Rows(model, 12),
                      optimizers=(opt, None), callbacks=[ForgeTrainerCallback(opt, callback_norm), recorder])
    return trainer, recorder


def test_trainer_clips_and_logs_the_fused_weights(tmp_path):
    trainer, recorder = _trainer(tmp_path)
    trainer.train()
    assert len(recorder.updates) == STEPS
    # plain SGD clipped to MAX_NORM over every parameter moves them by exactly LR * MAX_NORM
    assert recorder.updates == pytest.approx([LR * MAX_NORM] * STEPS, rel=1e-3)
    assert min(recorder.norms) > 10 * MAX_NORM, "the test must clip every step"
    logged = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    assert logged == pytest.approx(recorder.norms, rel=1e-6)


@pytest.mark.parametrize("overrides, match", [
    (dict(max_grad_norm=1.0), r"max_grad_norm=1.0.*ForgeTrainerCallback\(optimizer, max_grad_norm"),
    (dict(gradient_accumulation_steps=1), r"gradient_accumulation_steps=1\) but patch\(grad_accumulation=2\)"),
    (dict(gradient_accumulation_steps=4), r"gradient_accumulation_steps=4\) but patch\(grad_accumulation=2\)"),
])
def test_trainer_setups_that_would_miss_fused_weights_are_refused_before_a_step(tmp_path, overrides, match):
    trainer, recorder = _trainer(tmp_path, **overrides)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    with pytest.raises(ValueError, match=match):
        trainer.train()
    assert not recorder.updates
    assert all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))
