"""Model registry: real-size configs match the published parameter counts; every family patches."""

from __future__ import annotations

import pytest
import torch

from forge_mcore.models import MixerConfig, build_model, model_config
from forge_mcore.nn import patch
from forge_mcore.nn.manager import _candidates

# Published totals (model cards / papers), in millions.
PUBLISHED = {
    "qwen3-0.6b": 596, "qwen3-1.7b": 1721, "qwen3-4b": 4022, "qwen3-8b": 8191, "qwen3-14b": 14768,
    "qwen3-32b": 32762, "qwen3-30b-a3b": 30532, "llama-3.1-8b": 8030, "gpt2": 124.4, "vit-base-16": 86.6,
    "vit-huge-14": 632, "mixer-b16": 59.88, "mixer-h14": 432.35,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_real_configs_have_the_published_parameter_count(name):
    model = build_model(name, device="meta", dtype=torch.bfloat16)
    total = sum(p.numel() for p in model.parameters()) / 1e6
    assert total == pytest.approx(PUBLISHED[name], rel=2e-3)


def test_qwen3_30b_a3b_experts_reach_the_fused_step():
    """Paper App. I.1/P: without the 3-D expert path a HF MoE reaches ~3-4%; with it >= 95%."""
    model = build_model("qwen3-30b-a3b", device="meta", dtype=torch.bfloat16)
    candidates = _candidates(model)
    fusable = sum(p.numel() for m in candidates.values() for p in m.parameters(recurse=False))
    assert fusable / sum(p.numel() for p in model.parameters()) >= 0.95


# coverage of the CPU test sizes (tiny widths make embeddings and norms weigh more than at real size)
TINY_COVERAGE = {"qwen3-tiny": 0.86, "llama-tiny": 0.89, "qwen3-moe-tiny": 0.96, "gpt2-tiny": 0.86,
                 "vit-tiny": 0.87, "mixer-tiny": 0.75}


@pytest.mark.parametrize("name", sorted(TINY_COVERAGE))
def test_every_family_patches_with_its_coverage(name):
    model = build_model(name)
    opt = patch(model, clip="none")
    assert opt.report.coverage >= TINY_COVERAGE[name]
    assert not [n for n, why in opt.report.not_fused.items() if why.startswith(("bypassed", "module called"))]


@pytest.mark.parametrize("name", ["qwen3-tiny", "mixer-tiny", "vit-tiny"])
def test_built_models_are_in_training_mode(name):
    """Dropout and the like must be on for training: the real-size configs keep their dropout."""
    model = build_model(name)
    assert all(m.training for m in model.modules())


def test_mixer_config_checks_its_geometry():
    assert MixerConfig(image_size=12, patch_size=4).num_tokens == 9
    with pytest.raises(ValueError, match="multiple of patch_size"):
        MixerConfig(image_size=13, patch_size=4)
    with pytest.raises(ValueError, match="unknown model"):
        model_config("qwen3-9b")
