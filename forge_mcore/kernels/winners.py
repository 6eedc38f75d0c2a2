"""Committed tile-config winners: a first step on a known device and shape does not tune.

``winners.csv`` (beside this file) holds, per device name and tuning key (see
``ops._tune_key``: mode, out x in, BT rounded up to a power of two, dtypes, rule,
variant, codec, weight store), the tile config the kernel benchmark measured
fastest in a CUDA graph over rotating buffers. ``ops`` uses the row whose device
name and key match if its config is still a candidate, else the nearest row's of the
same kind (``lookup``); with none of that kind, or with ``FORGE_AUTOTUNE=1``, it tunes.
Regenerate from a benchmark CSV (its ``ceilings.json`` beside it names the device):

    python -m forge_mcore.bench.kernel --winners results/DATE/kernel.csv
"""

from __future__ import annotations

import csv
import functools
import math
import os
from collections.abc import Sequence
from dataclasses import fields

from .configs import TileConfig

WINNERS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "winners.csv")
KEY_FIELDS = ("mode", "out_features", "in_features", "bt_bucket", "dy_dtype", "weight_dtype", "accum_dtype",
              "rule", "variant", "state_dtype", "weight_store")
CONFIG_FIELDS = tuple(f.name for f in fields(TileConfig))


def key_cells(key: tuple) -> tuple[str, ...]:
    """A tuning key as its CSV cells (dtypes by name, None as ''): how rows are matched."""
    return tuple("" if value is None else str(value) for value in key)


def config_to_row(cfg: TileConfig) -> dict[str, str]:
    return {name: "" if getattr(cfg, name) is None else str(getattr(cfg, name)) for name in CONFIG_FIELDS}


def _config_from_row(row: dict[str, str]) -> TileConfig:
    values = {}
    for f in fields(TileConfig):
        if f.name not in row:  # a field added after the file was written: its default
            continue
        cell = row[f.name]
        if f.name == "maxnreg":
            values[f.name] = int(cell) if cell else None
        elif f.name in ("prefetch", "fast_division"):
            values[f.name] = cell == "True"
        elif f.name == "tile_ring":
            values[f.name] = _tile_ring(cell)
        elif f.name == "kernel":
            values[f.name] = cell or "triton"
        elif f.name == "tile_fill":
            values[f.name] = cell or "tma"
        else:
            values[f.name] = int(cell)
    return TileConfig(**values)


def _tile_ring(cell: str) -> int:
    """A ``tile_ring`` cell: a buffer count, or a boolean as written before session 27 (True: three)."""
    legacy = {"True": 3, "False": 0, "": 0}
    return legacy[cell] if cell in legacy else int(cell)


Winner = tuple[str, tuple[str, ...], TileConfig, float]  # device, key cells, config, measured ms


def read(path: str | None = None) -> list[Winner]:
    """Every row of the winners file (none if it does not exist)."""
    path = path or WINNERS_CSV
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [(row["device"], tuple(row[k] for k in KEY_FIELDS), _config_from_row(row), float(row["forge_ms"]))
                for row in csv.DictReader(f)]


@functools.cache
def load(path: str, device_name: str) -> dict[tuple[str, ...], TileConfig]:
    """{key cells: config} of the rows of ``path`` measured on ``device_name``."""
    return {cells: cfg for device, cells, cfg, _ in read(path) if device == device_name}


# where a key's shape and BT bucket sit (the rest of a key is its kind)
_SHAPE_AT = tuple(KEY_FIELDS.index(name) for name in ("out_features", "in_features", "bt_bucket"))


def lookup(key: tuple, device_name: str, candidates: Sequence[TileConfig]) -> TileConfig | None:
    """The committed winner for this tuning key on this device among ``candidates`` (the configs
    pruned for this problem): its own row's, or else the nearest row's of the same mode, dtypes,
    rule, codec and store (out x in and BT bucket apart by the fewest doublings), so a shape or BT
    the benchmark did not measure starts without minutes of tuning. None: nothing applies."""
    table = load(WINNERS_CSV, device_name)
    cells = key_cells(key)
    if table.get(cells) in candidates:
        return table[cells]

    def kind(row: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(v for i, v in enumerate(row) if i not in _SHAPE_AT)

    def doublings(row: tuple[str, ...]) -> float:
        return sum(abs(math.log2(int(row[i]) / int(cells[i]))) for i in _SHAPE_AT)

    near = sorted((doublings(row), row) for row, cfg in table.items() if kind(row) == kind(cells) and cfg in candidates)
    return table[near[0][1]] if near else None


def write(rows: list[Winner], path: str | None = None) -> None:
    """Rows of (device name, key cells, config, measured ms), sorted for stable diffs."""
    table = [{"device": device, **dict(zip(KEY_FIELDS, cells)), **config_to_row(cfg), "forge_ms": f"{ms:.5f}"}
             for device, cells, cfg, ms in rows]
    table.sort(key=lambda r: tuple(r[k] for k in ("device",) + KEY_FIELDS))
    with open(path or WINNERS_CSV, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["device", *KEY_FIELDS, *CONFIG_FIELDS, "forge_ms"])
        writer.writeheader()
        writer.writerows(table)
    load.cache_clear()
