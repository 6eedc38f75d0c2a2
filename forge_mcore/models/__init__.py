"""Models by name, randomly initialized from configs (no hub downloads).

``build_model("qwen3-8b", dtype=torch.bfloat16, device="cuda")`` builds the HF
model with the public config's shapes (typed in by hand below); the ``*-tiny``
names are the CPU-test sizes, with odd widths. ``example_batch`` makes a
matching batch and ``training_loss`` the scalar to backpropagate.

Families: HF Qwen3, Llama, Qwen3-MoE, GPT-2, ViT (``transformers`` needed) and
the MLP-Mixer of ``forge_mcore.models.mixer``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .mixer import MixerConfig, MlpMixer

_QWEN3 = dict(max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1_000_000.0, head_dim=128,
              num_key_value_heads=8, vocab_size=151936)

# name -> (family, config fields). Shapes from each model's public config.json.
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "qwen3-0.6b": ("qwen3", dict(_QWEN3, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                                 num_attention_heads=16, tie_word_embeddings=True)),
    "qwen3-1.7b": ("qwen3", dict(_QWEN3, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                                 num_attention_heads=16, tie_word_embeddings=True)),
    "qwen3-4b": ("qwen3", dict(_QWEN3, hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                               num_attention_heads=32, tie_word_embeddings=True)),
    "qwen3-8b": ("qwen3", dict(_QWEN3, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                               num_attention_heads=32, tie_word_embeddings=False)),
    "qwen3-14b": ("qwen3", dict(_QWEN3, hidden_size=5120, intermediate_size=17408, num_hidden_layers=40,
                                num_attention_heads=40, tie_word_embeddings=False)),
    "qwen3-32b": ("qwen3", dict(_QWEN3, hidden_size=5120, intermediate_size=25600, num_hidden_layers=64,
                                num_attention_heads=64, tie_word_embeddings=False)),
    "qwen3-30b-a3b": ("qwen3_moe", dict(_QWEN3, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                                        num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4,
                                        num_experts=128, num_experts_per_tok=8, norm_topk_prob=True,
                                        decoder_sparse_step=1, tie_word_embeddings=False)),
    "llama-3.1-8b": ("llama", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                   num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                                   max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=500000.0,
                                   tie_word_embeddings=False)),
    "gpt2": ("gpt2", dict(n_embd=768, n_layer=12, n_head=12, vocab_size=50257, n_positions=1024)),
    "gpt2-medium": ("gpt2", dict(n_embd=1024, n_layer=24, n_head=16, vocab_size=50257, n_positions=1024)),
    "vit-base-16": ("vit", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                intermediate_size=3072, image_size=224, patch_size=16, num_labels=1000)),
    "vit-large-16": ("vit", dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                 intermediate_size=4096, image_size=224, patch_size=16, num_labels=1000)),
    "vit-huge-14": ("vit", dict(hidden_size=1280, num_hidden_layers=32, num_attention_heads=16,
                                intermediate_size=5120, image_size=224, patch_size=14, num_labels=1000)),
    "mixer-b16": ("mixer", dict(hidden_size=768, tokens_mlp_dim=384, channels_mlp_dim=3072, num_blocks=12,
                                patch_size=16)),
    "mixer-l16": ("mixer", dict(hidden_size=1024, tokens_mlp_dim=512, channels_mlp_dim=4096, num_blocks=24,
                                patch_size=16)),
    "mixer-h14": ("mixer", dict(hidden_size=1280, tokens_mlp_dim=640, channels_mlp_dim=5120, num_blocks=32,
                                patch_size=14)),
    # CPU-test sizes: odd widths, two layers, dropout off so runs are deterministic.
    "qwen3-tiny": ("qwen3", dict(hidden_size=48, intermediate_size=72, num_hidden_layers=2, num_attention_heads=3,
                                 num_key_value_heads=1, head_dim=16, vocab_size=97, max_position_embeddings=128,
                                 tie_word_embeddings=True)),
    "llama-tiny": ("llama", dict(hidden_size=48, intermediate_size=80, num_hidden_layers=2, num_attention_heads=4,
                                 num_key_value_heads=2, vocab_size=97, max_position_embeddings=128,
                                 tie_word_embeddings=False)),
    "qwen3-moe-tiny": ("qwen3_moe", dict(hidden_size=32, intermediate_size=64, moe_intermediate_size=40,
                                         num_experts=8, num_experts_per_tok=2, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, vocab_size=48,
                                         max_position_embeddings=128, tie_word_embeddings=False,
                                         experts_implementation="eager")),
    "gpt2-tiny": ("gpt2", dict(n_embd=48, n_layer=2, n_head=3, vocab_size=101, n_positions=16, resid_pdrop=0.0,
                               embd_pdrop=0.0, attn_pdrop=0.0)),
    "vit-tiny": ("vit", dict(hidden_size=36, num_hidden_layers=2, num_attention_heads=3, intermediate_size=44,
                             image_size=12, patch_size=4, num_labels=5, hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0)),
    "mixer-tiny": ("mixer", dict(image_size=12, patch_size=4, hidden_size=20, tokens_mlp_dim=14,
                                 channels_mlp_dim=36, num_blocks=2, num_classes=7)),
}

_HF_CLASSES = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "vit": ("ViTConfig", "ViTForImageClassification"),
}


def model_names() -> list[str]:
    return sorted(MODELS)


def model_config(name: str, **overrides: Any) -> Any:
    """The config of ``name`` (an HF config, or a ``MixerConfig``), fields overridden by ``overrides``."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; known: {model_names()}")
    family, fields = MODELS[name]
    fields = {**fields, **overrides}
    if family == "mixer":
        return MixerConfig(**fields)
    import transformers

    return getattr(transformers, _HF_CLASSES[family][0])(**fields)


def build_model(name: str, *, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
                seed: int = 0, **overrides: Any) -> nn.Module:
    """``name``'s model, randomly initialized (``torch.manual_seed(seed)``), on ``device`` in ``dtype``."""
    config = model_config(name, **overrides)
    torch.manual_seed(seed)
    with torch.device(device):
        if isinstance(config, MixerConfig):
            model = MlpMixer(config).to(dtype)
        else:
            import transformers

            cls = getattr(transformers, _HF_CLASSES[MODELS[name][0]][1])
            model = cls._from_config(config, dtype=dtype)
    return model.train()


def example_batch(model: nn.Module, batch_size: int, seq_len: int, *,
                  generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
    """Random keyword inputs for ``model`` with labels (``seq_len`` is ignored by image models)."""
    p = next(model.parameters())
    config = model.config
    if isinstance(config, MixerConfig) or getattr(model, "main_input_name", "") == "pixel_values":
        size = config.image_size
        classes = config.num_classes if isinstance(config, MixerConfig) else config.num_labels
        pixels = torch.randn(batch_size, config.num_channels, size, size, generator=generator)
        labels = torch.randint(0, classes, (batch_size,), generator=generator)
        return {"pixel_values": pixels.to(p.device, p.dtype), "labels": labels.to(p.device)}
    ids = torch.randint(0, config.vocab_size, (batch_size, seq_len), generator=generator).to(p.device)
    return {"input_ids": ids, "labels": ids}


def training_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """The scalar loss of ``model(**batch)`` (HF outputs carry it as ``.loss``)."""
    out = model(**batch)
    return out if isinstance(out, torch.Tensor) else out.loss


__all__ = ["MODELS", "MixerConfig", "MlpMixer", "build_model", "example_batch", "model_config", "model_names",
           "training_loss"]
