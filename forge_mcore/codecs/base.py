"""The codec contracts: how optimizer state and weights are stored.

A state codec is a pair of ``@triton.jit`` helpers plus its torch twin:

* ``triton_load(src, scale_ptr, om, on, M, N, NB, BM, BN, NONNEG, USE_TMA) -> fp32 tile``
  and ``triton_store(dst, scale_ptr, om, on, M, N, NB, x, NONNEG, USE_TMA)`` work
  on the tile whose corner is (om, on) of an ``M x N`` row-major state (a TMA
  descriptor or a pointer, see ``kernels/tile_io.py``) whose block scales (if
  any) form an ``M x NB`` row-major array read through plain pointers;
* ``zeros / decode / encode_`` do the same on whole tensors in torch.

The codes of a block-scaled codec are stored in whole blocks: an ``M x N`` state
holds ``M x NB*block`` codes (``stored_columns``), its missing columns canonical
(what encoding zeros writes), and a codec may order the codes within a block as
its kernels read them (int8: ``blockwise.py``). ``EncodedState.shape`` is the
state's own (the weight's) shape.

Encoding is tile-local by construction: a scale block never crosses a tile
edge (tiles are a whole number of blocks wide), so a skipped tile's codes and
scales stay bit-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from ..registry import Registry


@dataclass
class EncodedState:
    """One optimizer state tensor as stored: codes plus optional block scales."""

    data: torch.Tensor
    scale: torch.Tensor | None
    nonnegative: bool
    columns: int  # the state's (the weight's) columns; ``data`` may hold more (whole blocks)

    @property
    def shape(self) -> tuple[int, int]:
        """The state's shape, the weight's (``data.shape`` counts whole blocks)."""
        return self.data.shape[0], self.columns

    @property
    def nbytes(self) -> int:
        return self.data.nbytes + (self.scale.nbytes if self.scale is not None else 0)


class StateCodec:
    """Base class of the state codecs (see the module docstring)."""

    name: ClassVar[str]
    # Width of a scale block along the contiguous dimension (None: unscaled).
    block: ClassVar[int | None] = None
    triton_load: ClassVar[Any]
    triton_store: ClassVar[Any]
    # Documented worst-case error of one encode, relative to the block's absmax
    # (or to the value itself for unscaled float codecs); tests use it as the
    # tolerance for one round trip.
    relative_error: ClassVar[float]

    def zeros(self, shape: tuple[int, int], device: torch.device, nonnegative: bool, init: float = 0.0) -> EncodedState:
        raise NotImplementedError

    def decode(self, enc: EncodedState) -> torch.Tensor:
        """A fresh fp32 tensor (never a view of the codes)."""
        raise NotImplementedError

    def encode_(self, enc: EncodedState, x: torch.Tensor) -> None:
        """Store fp32 ``x`` into ``enc`` in place."""
        raise NotImplementedError

    def scale_blocks(self, n_cols: int) -> int:
        """Number of scale blocks per row (0 for unscaled codecs)."""
        return 0 if self.block is None else -(-n_cols // self.block)

    def stored_columns(self, n_cols: int) -> int:
        """Columns of the codes of an ``n_cols``-column state: whole blocks for scaled codecs."""
        return n_cols if self.block is None else self.scale_blocks(n_cols) * self.block


# The layout of the codes a state_dict holds (``ForgeParamState.state_dict``'s "codes_version"):
# 1 (state_dicts without the key): every codec's codes M x N in column order; 2: block codecs'
# codes in whole blocks, int8's in fragment order (``blockwise.py``).
CODES_VERSION = 2

CODECS: Registry[StateCodec] = Registry(StateCodec, "state_dtype")
register = CODECS.register  # class decorator of each codec


def get_codec(name: str | StateCodec) -> StateCodec:
    """The state codec called ``name`` (``"fp32"``, ``"bf16"``, ``"int8"``, ``"fp8"``), or ``name`` itself."""
    return CODECS.get(name)


def available_codecs() -> list[str]:
    return CODECS.names()
