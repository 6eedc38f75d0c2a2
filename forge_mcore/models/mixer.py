"""A small MLP-Mixer (Tolstikhin et al. 2021): the coverage extreme of paper App. P.6.

Everything but the patch-embedding convolution, the LayerNorms and the
classifier bias is an ``nn.Linear``: the token-mixing MLP acts on the patch
axis (its in_features is the token count), the channel-mixing MLP on features.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class MixerConfig:
    """Shape of an MLP-Mixer.

    image_size, patch_size, num_channels: the input; tokens = (image_size // patch_size) ** 2.
    hidden_size: channels per token after the patch embedding.
    tokens_mlp_dim, channels_mlp_dim: widths of the token- and channel-mixing MLPs.
    num_blocks: mixer layers. num_classes: classifier outputs.
    """

    image_size: int = 224
    patch_size: int = 16
    num_channels: int = 3
    hidden_size: int = 768
    tokens_mlp_dim: int = 384
    channels_mlp_dim: int = 3072
    num_blocks: int = 12
    num_classes: int = 1000

    def __post_init__(self) -> None:
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")

    @property
    def num_tokens(self) -> int:
        return (self.image_size // self.patch_size) ** 2


class MlpBlock(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, config: MixerConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(config.hidden_size)
        self.token_mixing = MlpBlock(config.num_tokens, config.tokens_mlp_dim)
        self.norm2 = nn.LayerNorm(config.hidden_size)
        self.channel_mixing = MlpBlock(config.hidden_size, config.channels_mlp_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, tokens, hidden)
        x = x + self.token_mixing(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mixing(self.norm2(x))


class MlpMixer(nn.Module):
    """``forward(pixel_values, labels=None)`` -> logits, or the cross-entropy loss when labels are given."""

    def __init__(self, config: MixerConfig) -> None:
        super().__init__()
        self.config = config
        self.stem = nn.Conv2d(config.num_channels, config.hidden_size, config.patch_size, stride=config.patch_size)
        self.blocks = nn.ModuleList(MixerBlock(config) for _ in range(config.num_blocks))
        self.norm = nn.LayerNorm(config.hidden_size)
        self.head = nn.Linear(config.hidden_size, config.num_classes)

    def forward(self, pixel_values: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        x = self.stem(pixel_values).flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x).mean(dim=1))
        return logits if labels is None else F.cross_entropy(logits.float(), labels)

    def example_inputs(self) -> tuple[torch.Tensor]:
        """One small batch for ``forge_mcore.patch``'s probe forward."""
        p = self.stem.weight
        c = self.config
        return (torch.zeros(1, c.num_channels, c.image_size, c.image_size, device=p.device, dtype=p.dtype),)
