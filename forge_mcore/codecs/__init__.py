"""State codecs (fp32, bf16, int8, fp8) and weight stores (fp32, bf16, bf16_sr, fp32_master)."""

from . import blockwise, plain  # noqa: F401  (registration)
from .base import EncodedState, StateCodec, available_codecs, get_codec
from .weight import (
    WeightStore,
    available_weight_stores,
    default_weight_store,
    get_weight_store,
    stochastic_round_bf16,
)

__all__ = [
    "EncodedState", "StateCodec", "WeightStore", "available_codecs", "available_weight_stores",
    "default_weight_store", "get_codec", "get_weight_store", "stochastic_round_bf16",
]
