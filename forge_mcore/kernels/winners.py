"""Committed tile-config winners: a first step on a known device and shape does not tune.

``winners.csv`` (beside this file) holds, per device name and tuning key (see
``ops._tune_key``: mode, out x in, BT rounded up to a power of two, dtypes, rule,
variant, codec, weight store), the tile config the kernel benchmark measured
fastest in a CUDA graph over rotating buffers, and the device's architecture
(``sm_90``). ``ops`` uses the nearest row of the key's kind whose config is still a
candidate (``lookup``: its own key's first), among the device's own rows and those
of devices of its architecture, its own winning a tie: an H100 without rows takes an
H200's (the same SMs and shared memory, so every config fits; the fastest may
differ, which its own rows settle). With none, or with ``FORGE_AUTOTUNE=1``, it
tunes. Regenerate from a benchmark CSV (its ``ceilings.json`` beside it names the
device and its architecture):

    python -m forge_mcore.bench.kernel --winners results/DATE/kernel.csv
"""

from __future__ import annotations

import csv
import functools
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import fields

import torch

from .configs import TileConfig

WINNERS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "winners.csv")
KEY_FIELDS = ("mode", "out_features", "in_features", "bt_bucket", "dy_dtype", "weight_dtype", "accum_dtype",
              "rule", "variant", "state_dtype", "weight_store")
CONFIG_FIELDS = tuple(f.name for f in fields(TileConfig))
_log = logging.getLogger(__name__)


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
        elif f.name in ("prefetch", "fast_division", "serial_fills"):
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


Winner = tuple[str, str, tuple[str, ...], TileConfig, float]  # device, arch, key cells, config, measured ms


def arch_of(device: torch.device | int | None = None) -> str:
    """A CUDA device's architecture as winners rows name it (``sm_90``): what decides which tile
    configs fit its shared memory and which kernels it runs."""
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


def read(path: str | None = None) -> list[Winner]:
    """Every row of the winners file (none if it does not exist)."""
    path = path or WINNERS_CSV
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [(row["device"], row.get("arch", ""), tuple(row[k] for k in KEY_FIELDS), _config_from_row(row),
                 float(row["forge_ms"])) for row in csv.DictReader(f)]


@functools.cache
def load(path: str) -> dict[tuple[str, str], dict[tuple[str, ...], TileConfig]]:
    """{(device, arch): {key cells: config}} of the rows of ``path``."""
    tables: dict[tuple[str, str], dict[tuple[str, ...], TileConfig]] = {}
    for device, arch, cells, cfg, _ in read(path):
        tables.setdefault((device, arch), {})[cells] = cfg
    return tables


# where a key's shape and BT bucket sit (the rest of a key is its kind)
_SHAPE_AT = tuple(KEY_FIELDS.index(name) for name in ("out_features", "in_features", "bt_bucket"))


def lookup(key: tuple, device_name: str, candidates: Sequence[TileConfig], arch: str | None = None
           ) -> TileConfig | None:
    """The committed winner for this tuning key on this device among ``candidates`` (the configs
    pruned for this problem): the row of the same mode, dtypes, rule, codec and store whose out x in
    and BT bucket are the fewest doublings away (its own key's: none), among this device's rows and,
    given its ``arch``, those of other devices of that architecture; on a tie this device's row wins.
    So a shape or BT the benchmark did not measure, or a device it did not run on, starts without
    minutes of tuning. None: nothing applies."""
    cells = key_cells(key)

    def kind(row: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(v for i, v in enumerate(row) if i not in _SHAPE_AT)

    def doublings(row: tuple[str, ...]) -> float:
        return sum(abs(math.log2(int(row[i]) / int(cells[i]))) for i in _SHAPE_AT)

    rows = [(doublings(row), device != device_name, device, row, cfg)
            for (device, row_arch), table in sorted(load(WINNERS_CSV).items())
            if device == device_name or (arch and row_arch == arch)
            for row, cfg in table.items() if kind(row) == kind(cells) and cfg in candidates]
    if not rows:
        return None
    _, borrowed, device, row, cfg = min(rows, key=lambda r: r[:2])
    if borrowed:
        _log.info("no committed tile config for %s on %s: using %s's (%s)", cells, device_name, device, row)
    return cfg


def write(rows: list[Winner], path: str | None = None) -> None:
    """Rows of (device name, arch, key cells, config, measured ms), sorted for stable diffs."""
    table = [{"device": device, "arch": arch, **dict(zip(KEY_FIELDS, cells)), **config_to_row(cfg),
              "forge_ms": f"{ms:.5f}"} for device, arch, cells, cfg, ms in rows]
    table.sort(key=lambda r: tuple(r[k] for k in ("device",) + KEY_FIELDS))
    with open(path or WINNERS_CSV, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["device", "arch", *KEY_FIELDS, *CONFIG_FIELDS, "forge_ms"])
        writer.writeheader()
        writer.writerows(table)
    load.cache_clear()
