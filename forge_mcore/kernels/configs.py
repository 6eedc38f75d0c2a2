"""Tile geometry of the fused kernel: the committed candidate list and its prune.

The autotuner (``forge_mcore.ops``) times the pruned candidates once per shape
key; paper App. H explains the space (128 x 128 tiles win on most shapes, the
pipeline depth and K chunk vary with BT). Every candidate is a whole number of
64-wide codec blocks wide, which keeps block-scaled state encoding tile-local.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

CODEC_BLOCK = 64
# The kernels a TileConfig may select (``TileConfig.kernel``): the Triton kernel and the
# persistent Gluon kernel's four schedules (``kernels/gluon_wgrad.py``).
GLUON_KERNELS = ("gluon_ws", "gluon_coop", "gluon_tall", "gluon_coop_tall")
# 64-row blocks of a tile per Gluon schedule (``TileConfig.row_blocks``).
_ROW_BLOCKS = {"gluon_ws": 1, "gluon_coop": 2, "gluon_tall": 2, "gluon_coop_tall": 4}
# The 64-row weight/state tile buffers a Gluon schedule may have (``TileConfig.epilogue_stages``): one
# per consumer (2); tall ping-pong's consumers may share one (1); a tall unit's two passes may have
# one each (4).
_GLUON_TILE_BUFFERS = {"gluon_ws": (2,), "gluon_coop": (2,), "gluon_tall": (1, 2, 4), "gluon_coop_tall": (2, 4)}
KERNELS = ("triton", *GLUON_KERNELS)
# The longest ``TileConfig.wave_sync`` wait, in cycles (~0.6 ms: longer than a tile at BT 16384).
WAVE_SYNC_MAX = 1_000_000


@dataclass(frozen=True)
class TileConfig:
    block_m: int
    block_n: int
    block_k: int
    group_m: int
    num_warps: int
    num_stages: int
    # Column halves kept in separate accumulators (1 or 2): halves the epilogue's
    # live registers. The epilogue works on sub-tiles exactly one codec block
    # (64 columns) wide, so block scales are per-row values of a sub-tile.
    split_n: int = 1
    # Register cap per thread (ptxas ``maxnreg``), None = the compiler's choice:
    # a lower cap fits more CTAs per SM so one tile's epilogue overlaps another's main loop.
    maxnreg: int | None = None
    # Prefetch the epilogue's weight/state tiles into L2 before the main loop.
    prefetch: bool = False
    # Triton kernel: > 1, the epilogue's two halves run as a software-pipelined loop of that depth
    # (asynchronous weight/state loads); 1: straight-line, half by half. Gluon kernels: the 64-row
    # weight/state tile buffers (below).
    epilogue_stages: int = 1
    # "gluon_ws": the persistent, warp-specialized Hopper kernel of ``kernels/gluon_wgrad.py``,
    # two consumer warpgroups in ping-pong (num_warps 8), one's rule and stores beside the
    # other's GEMM, with a tile buffer each (epilogue_stages 2). "gluon_coop": the same kernel
    # with both consumers on one 128-row tile, a 64-row half and a tile buffer each; "gluon_tall":
    # ping-pong on 128-row tiles, each through its consumer's 64-row buffer in two passes. A tall
    # config with epilogue_stages 1 has one tile buffer that its consumers take in turn (what that
    # saves goes to a deeper slab ring; ``gluon_wgrad._ws_fetch_units_shared``). "gluon_coop_tall":
    # both consumers on one 256-row tile, a tall 128-row half each through its 64-row buffer in
    # two passes (24 B of slabs per output and k-step against 32). A tall or cooperative-tall
    # config with epilogue_stages 4 has a buffer per consumer and pass, both filled during the
    # unit's main loop, where one buffer makes the second pass's rows wait for the first's stores
    # (session 14: ~26-30 k cycles a unit at BT 512-1024). Where
    # ``gluon_wgrad.applies``; elsewhere the Triton kernel on its guard tile
    # (``triton_geometry``). num_stages is then the slab ring's depth.
    kernel: str = "triton"
    # How a Gluon kernel's weight and state tiles reach shared memory: "tma" (the SM's TMA engine,
    # which also carries the dY/X slab ring) or "lsu" (the tile producer warp's cp.async through
    # the load/store unit, leaving the TMA engine to the slabs; a buffer per consumer only; where a
    # row of the weight or a state does not start 16-element aligned, TMA after all).
    tile_fill: str = "tma"
    # A Gluon kernel's int8 codec divides by and into its code range (once per row, state and
    # 64-column block) by div_rn's fast path without its range check and slow-path call
    # (``tl_bits.div_exact_by_constant``, ``div_exact_constant_by``): the same bits, ~6% fewer
    # instructions in the int8 rule. No effect on other states.
    fast_division: bool = False
    # Ping-pong ("gluon_ws", TMA fills) only, the number of column-half tile buffers (2 or 3; 0:
    # none) in a ring the consumers share instead of a whole unit's buffer each: half q of the
    # program's units goes in buffer q % tile_ring once half q - tile_ring is written and stored.
    # Three keep a fill's slack (one ping-pong turn) and the half unit they save deepens the slab
    # ring (six-deep beside AdamW's bf16 moments, seven with 4 B per element); two save another
    # half (seven-deep, eight) but a unit's fills wait for the other consumer's previous rule.
    tile_ring: int = 0
    # A Gluon kernel's first weight/state fill waits until this many dY/X slabs have landed (0: at
    # once). At the kernel's start every SM's slabs and first tiles go to HBM together; the tiles
    # can wait, the first main loop cannot.
    first_fill_after: int = 0
    # A tile ring's fill goes out only once the fill before it has landed (the ring's first
    # tile_ring fills excepted), so at most one fill competes with the slabs at a time (a slab
    # issued after two fills waited about twice as long: session 45's slab probe). On an H100
    # 1.007-1.025x on AdamW's two-buffer rings at BT 1024, 0.89-1.00x on three-buffer ones at BT 512.
    serial_fills: bool = False
    # A Gluon kernel's programs start each round of tiles (a program's i-th tile) together: each
    # waits at most this many cycles (0: not at all) for the others to reach the round, and a
    # program whose wait past round 0 timed out waits no more in that launch. In step, a round's
    # programs read each dY and X slab at the same k, once from HBM; apart, they miss L2 (session
    # 51, an H100: the LM head at BT 16384 read 40-82 GB a step from DRAM, 27-28 GB in step).
    wave_sync: int = 0

    def __post_init__(self) -> None:
        if self.split_n not in (1, 2) or self.block_n != self.split_n * CODEC_BLOCK:
            raise ValueError(f"block_n must be split_n ({self.split_n}) x {CODEC_BLOCK}: {self}")
        if self.epilogue_stages not in ((1, 2, 3) if self.kernel == "triton" else (1, 2, 4)):
            raise ValueError(f"epilogue_stages must be 1, 2 or 3 (the Triton kernel's pipeline depth), or a Gluon "
                             f"kernel's tile buffers (1, 2 or 4): {self}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}: {self}")
        if self.tile_fill not in ("tma", "lsu") or (self.tile_fill == "lsu" and (
                self.kernel not in GLUON_KERNELS or self.epilogue_stages != 2)):
            raise ValueError(f"tile_fill must be 'tma', or 'lsu' for a Gluon kernel with a tile buffer per "
                             f"consumer (epilogue_stages 2): {self}")
        if type(self.tile_ring) is not int or self.tile_ring not in (0, 2, 3) or self.tile_ring and (
                self.kernel != "gluon_ws" or self.tile_fill != "tma"):
            raise ValueError(f"tile_ring is 0 or the ping-pong kernel's (gluon_ws, TMA tile fills) ring of 2 or 3 "
                             f"column-half tile buffers: {self}")
        if type(self.first_fill_after) is not int or not 0 <= self.first_fill_after <= self.num_stages or (
                self.first_fill_after and self.kernel not in GLUON_KERNELS):
            raise ValueError(f"first_fill_after is a Gluon kernel's count of slabs (0 to num_stages) its first tile "
                             f"fill waits for: {self}")
        if type(self.serial_fills) is not bool or self.serial_fills and not self.tile_ring:
            raise ValueError(f"serial_fills is a tile ring's (tile_ring 2 or 3): {self}")
        if type(self.wave_sync) is not int or not 0 <= self.wave_sync <= WAVE_SYNC_MAX or (
                self.wave_sync and self.kernel not in GLUON_KERNELS):
            raise ValueError(f"wave_sync is a Gluon kernel's wait in cycles (0 to {WAVE_SYNC_MAX}) for the other "
                             f"programs at each round of tiles: {self}")
        if self.fast_division and self.kernel not in GLUON_KERNELS:
            raise ValueError(f"fast_division is a Gluon kernel's (the Triton kernel divides by div_rn): {self}")
        if self.kernel in GLUON_KERNELS and (self.num_warps != 8 or self.split_n != 2
                                             or self.epilogue_stages not in _GLUON_TILE_BUFFERS[self.kernel]
                                             or self.block_k not in (32, 64) or self.prefetch
                                             or self.maxnreg is not None
                                             or self.block_m != 64 * self.row_blocks):
            raise ValueError(f"a {self.kernel} config has two consumer warpgroups (num_warps 8) with a tile "
                             f"buffer each (epilogue_stages 2; tall ones may share one: 1; tall and cooperative-tall "
                             f"ones may have one per pass: 4), is "
                             f"{64 * self.row_blocks} rows and 128 columns in two halves with BLOCK_K 32 or 64, "
                             f"and has neither the Triton kernel's prefetch nor its register cap: {self}")

    @property
    def row_blocks(self) -> int:
        """64-row blocks of a Gluon tile: one per consumer of a cooperative tile ("gluon_coop"), two
        passes of one consumer's buffer in a tall one ("gluon_tall"), two passes of each consumer's
        in a cooperative tall one ("gluon_coop_tall")."""
        return _ROW_BLOCKS.get(self.kernel, 1)

    @property
    def cooperative(self) -> bool:
        """Both consumers of a Gluon tile run its main loop at once, a 64-row ("gluon_coop") or
        128-row ("gluon_coop_tall") half each; otherwise their main loops take turns on whole tiles
        (ping-pong)."""
        return self.kernel in ("gluon_coop", "gluon_coop_tall")

    @property
    def units_per_tile(self) -> int:
        """Consumers' shares of a Gluon tile (units): both consumers share a cooperative one."""
        return 2 if self.cooperative else 1

    @property
    def passes(self) -> int:
        """64-row passes of one unit through its consumer's tile buffer (tall units: 2)."""
        return self.row_blocks // self.units_per_tile

    @property
    def guard_tile(self) -> tuple[int, int]:
        """The block one guard + telemetry reduction covers (a non-finite one is skipped whole and
        counted once): the tile, or a 64-row block of a cooperative or tall one."""
        return self.block_m // self.row_blocks, self.block_n

    @functools.cached_property  # (read at every full launch; the fields are frozen)
    def triton_geometry(self) -> TileConfig:
        """The Triton kernel's config where this one's Gluon kernel does not apply: the same
        guard tile, K chunk, ring depth and warps, so a step's results and skipped tiles do not
        depend on which kernel ran it."""
        if self.kernel == "triton":
            return self
        rows, cols = self.guard_tile
        return TileConfig(rows, cols, self.block_k, self.group_m, self.num_warps, self.num_stages,
                          split_n=self.split_n, epilogue_stages=min(self.epilogue_stages, 2))

    def replaced(self, fields: str) -> TileConfig:
        """This config with ``"field=value[,field=value...]"`` replaced (the device scripts' A/B
        arms: ``scripts/device/config_ab.py`` VARY, ``clock_probe.py``'s ``arm@...``). Values parse
        as int, True/False or None, else str; the result is validated like any config."""
        names = {f.name for f in dataclasses.fields(self)}
        values = dict(item.split("=", 1) for item in fields.split(","))
        if not values.keys() <= names:
            raise ValueError(f"{sorted(values.keys() - names)} are not TileConfig fields (these are: {sorted(names)})")
        special = {"True": True, "False": False, "None": None}
        return dataclasses.replace(self, **{k: int(v) if v.lstrip("-").isdigit() else special.get(v, v)
                                            for k, v in values.items()})

    def smem_bytes(self, elem_bytes: int) -> int:
        """Shared memory of the pipelined dY and X slabs."""
        return self.num_stages * self.block_k * (self.block_m + self.block_n) * elem_bytes


# Curated base set (H100/H200, bf16 operands). Order is irrelevant: all are timed.
# Small tiles and register caps buy CTAs per SM: with two or three resident, one
# tile's epilogue (HBM-bound) runs beside another's main loop (tensor cores).
# Measured on one H200 (docs/kernel_history.md; results/2026-11-30/session2/grid/sweep.csv and
# session4/call1/gpu*/sweep.csv): 64-row tiles win at BT <= 1024, with the pipelined
# epilogue (epilogue_stages=2: a half's weight/state loads issued together, the next
# half's before this half's update) on 6 of 8 AdamW bf16 cells and, with the L2
# prefetch, on every int8 cell there; 128x128 capped at 128 registers at BT >= 4096.
# Uncapped 128x128, 8-warp 64x128, pointer tiles and a pipelined 128x128 epilogue lost.
CONFIGS: tuple[TileConfig, ...] = (
    TileConfig(128, 128, 64, 8, 8, 3, split_n=2, maxnreg=128),
    TileConfig(128, 128, 64, 8, 8, 3, split_n=2, maxnreg=128, prefetch=True),
    TileConfig(128, 128, 64, 8, 8, 2, split_n=2, maxnreg=128),
    TileConfig(64, 128, 64, 8, 4, 3, split_n=2),
    TileConfig(64, 128, 64, 8, 4, 3, split_n=2, prefetch=True),
    TileConfig(64, 128, 64, 8, 4, 3, split_n=2, epilogue_stages=2),
    TileConfig(64, 128, 64, 8, 4, 3, split_n=2, prefetch=True, epilogue_stages=2),
    TileConfig(64, 128, 64, 8, 4, 2, split_n=2),
    TileConfig(64, 128, 64, 8, 4, 2, split_n=2, prefetch=True),
    TileConfig(64, 64, 64, 8, 4, 3),
    TileConfig(64, 64, 64, 8, 4, 3, prefetch=True),
    TileConfig(64, 64, 64, 8, 4, 2, prefetch=True),
    # The persistent, warp-specialized Gluon kernel (two consumer warpgroups in ping-pong, a
    # five-deep slab ring) for bf16/fp32 states where its buffers fit; elsewhere this geometry
    # runs the Triton kernel. Session 8 (results/2026-12-01/session8/): 0.96-1.38x the
    # committed winners in 30 graph-timed cells at BT 512/1024 (5 shapes, AdamW, SGD-momentum,
    # Lion), faster in 28 (call4); launched and replayed like the Triton kernel, 18 host us per
    # replayed launch against its 22 (call8).
    # The same kernel's cooperative schedule (both consumers on one 128-row tile): at BT >= 4096
    # 1.03-1.21x the committed Triton winners in 11 of 12 graph-timed cells, bits equal
    # (session 10, results/2026-12-01/session10/call7/); slower at BT <= 1024 (call3). Four-deep
    # fits AdamW's bf16 moments, five-deep a tile of 4 B per element (SGD-momentum, Lion, int8).
    TileConfig(128, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_coop"),
    TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_coop"),
    TileConfig(128, 128, 32, 8, 8, 8, split_n=2, epilogue_stages=2, kernel="gluon_coop"),
    TileConfig(64, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_ws"),
    # The same with its weight and state tiles copied in by the tile producer's cp.async instead of
    # TMA (``tile_fill`` "lsu", session 23): Nsight's stall samples (session 14's profile) put half of
    # each consumer's main-loop time on the slab barrier, and the slabs share the SM's TMA engine with
    # the tile fills. Bits equal; against the winners (results/2026-12-03/session23/call4/):
    # 1.05-1.09x at 1024 x 4096 BT 512 (bf16 states), 0.97-1.01x at its BT 1024, 0.84-1.00x on 4096²;
    # on tall tiles 0.94-1.01x, and 0.52x for AdamW at 12288 x 4096 BT 1024 (one warp's copies
    # cannot keep a 128-row tile's fills ahead), so no tall or cooperative twin.
    TileConfig(64, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_fill="lsu"),
    # The ping-pong config with the int8 codec's fast divisions (``fast_division``, session 25): the
    # int8 rule's loop 1,237 -> 1,159 SASS instructions. Against the same config without them
    # (results/2026-12-03/session25/call1, call4: code_ab.sh, runs alternating): int8 at BT 512
    # 1.04-1.08x on 4096², 12288 x 4096, 4096 x 12288, 1024 x 4096; at BT 1024 0.97-1.01x, and on
    # tall and cooperative tiles at BT >= 1024 0.95-0.99x (so no tall or cooperative twin then; the
    # cooperative ones below since session 30).
    TileConfig(64, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_ws", fast_division=True),
    # The ping-pong consumers' tiles through a ring of three column-half buffers (``tile_ring``,
    # session 26): the half unit it saves deepens the slab ring, six-deep beside AdamW's bf16
    # moments, seven with 4 B per element (the ring's depth: each winner against itself with four
    # stages 0.91-0.96x, six 1.03-1.06x, results/2026-12-03/session26/call3). Swept beside the
    # committed winners (call4; bits: the parity, poisoned-tile, every-codec, traced and
    # main-loop-only GPU tests): 1.02-1.12x in 14 of 16 cells of 1024 x 4096 and 4096² at BT 512
    # and 1024 (AdamW bf16 23.3 -> 21.3 us at 1024 x 4096 BT 512, 99.4 -> 89.5 us at 4096² BT 1024),
    # 0.96x in two (4096² int8 BT 512, SGD-m BT 1024: their winners stay).
    TileConfig(64, 128, 64, 8, 8, 6, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3),
    TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3),
    TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3,
               fast_division=True),
    # The three-buffer ring configs whose first weight/state fill waits for two slabs
    # (``first_fill_after``, session 45): every SM's first fills otherwise go to HBM beside its first
    # slabs and stretch the first main loop (1024 x 4096 SGD-m BT 512: 5,000 cycles against 3,790
    # alone; AdamW bf16 6,480). Each 1024 x 4096 winner against itself on an H100 (bits equal,
    # results/2026-12-06/session45/call4): BT 512 SGD-m 1.069x, Lion 1.072x, AdamW bf16 1.043x; BT
    # 1024 (a two-half ring) 0.99-1.01x, 4096² BT 1024 0.98-1.01x (calls 3, 8). Swept with every
    # ping-pong config on 1024 x 4096 and 4096² at BT 512 (call 9): a twin first in all eight cells.
    TileConfig(64, 128, 64, 8, 8, 6, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3,
               first_fill_after=2),
    TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=3,
               fast_division=True, first_fill_after=2),
    # A tile ring of two column halves (session 27): one half less than three, so one slab stage
    # more (seven beside AdamW's bf16 moments, eight with 4 B per element), but a unit's fills wait
    # for the other consumer's previous rule instead of its own previous unit's.
    TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=2),
    TileConfig(64, 128, 64, 8, 8, 8, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=2),
    TileConfig(64, 128, 64, 8, 8, 8, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=2,
               fast_division=True),
    # Their twins whose fills go out one at a time (``serial_fills``, session 46): each winner of the AdamW
    # cells at BT 1024 against itself on an H100 (bits equal, results/2026-12-06/session46/call6): bf16
    # 1.009-1.017x on the four shapes but the LM head, int8 1.007x and 1.025x (1024 x 4096, 4096²). At BT 512
    # the three-buffer ring's twins lost (0.89-1.00x, call 1), and SGD-m and Lion at BT 1024 read 0.98-1.00x.
    TileConfig(64, 128, 64, 8, 8, 7, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=2,
               serial_fills=True),
    TileConfig(64, 128, 64, 8, 8, 8, split_n=2, epilogue_stages=2, kernel="gluon_ws", tile_ring=2,
               fast_division=True, serial_fills=True),
    # Tall ping-pong with one tile buffer for both consumers (epilogue_stages 1, session 17): the
    # 48 KB it saves (AdamW bf16) deepen the slab ring to five slabs, which AdamW's bf16 moments
    # could not have with a buffer per consumer: 1.08-1.10x the four-deep tall config at BT 16384,
    # 1.01-1.07x at BT 4096 (interleaved sweep, results/2026-12-02/session17/call5/).
    TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=1, kernel="gluon_tall"),
    TileConfig(128, 128, 64, 8, 8, 6, split_n=2, epilogue_stages=1, kernel="gluon_tall"),
    # Ping-pong on 128-row tiles ("gluon_tall", session 14): at BT <= 1024 the 64-row ping-pong
    # tile's slab reads from L2 (48 B per output and k-step) cap the step below 70% of its floor
    # (docs/kernel_history.md, after session 13: "A bound for the current tiles"); a 128-row tile
    # reads 32. Against the tuned configs in one call (results/2026-12-01/session14/call4/): AdamW
    # bf16 (four-deep) 1.02-1.11x at BT 1024 and 1.03-1.05x at BT 4096 on the 4096-class shapes
    # (1024x4096: 0.98x), 0.93-0.99x at BT 512;
    # SGD-momentum (five-deep: a tile of 4 B per element) 1.08-1.22x at BT 1024. Not for int8 states
    # (``gluon_wgrad.applies``).
    TileConfig(128, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_tall"),
    TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_tall"),
    # Cooperative 256-row tiles ("gluon_coop_tall", session 19): each consumer a tall 128-row half,
    # so a k-step reads 24 B of slabs per output instead of 32. Beside two 64 x 128 buffers AdamW's
    # bf16 moments fit a five-deep BK 32 ring, 4 B per element a six-deep one. Interleaved sweeps
    # (results/2026-12-02/session19/): at BT 16384 on the LM head 1.00x (AdamW bf16) and 1.02x
    # (SGD-momentum, Lion) the best tall config; 0.77-0.94x at BT <= 1024, where ping-pong hides
    # the epilogue behind the other consumer's GEMM and the cooperative schedule cannot (call 2).
    TileConfig(256, 128, 32, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_coop_tall"),
    TileConfig(256, 128, 32, 8, 8, 6, split_n=2, epilogue_stages=2, kernel="gluon_coop_tall"),
    # The cooperative and cooperative-tall int8 configs with the fast divisions (session 30):
    # session 25 measured them 0.95-0.99x while the int8 tall rule spilled 96-104 B; with its
    # halves carried through the loop (16-24 B) the divisions take 5% of the int8 step kernel's
    # static instructions off. Against each twin without them in one sweep (AdamW int8, 5 shapes x
    # BT 4096/16384, results/2026-12-04/session30/call6/): cooperative 0.98-1.04x (median 1.016x),
    # cooperative-tall 1.01-1.07x (median 1.021x); three tall twins 0.94-1.05x (median 0.993x; the
    # two-buffer tall kernel's stack grows 16 -> 24 B with them), so none of those. No effect on
    # other states (bf16 moments compile to their twins).
    TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_coop", fast_division=True),
    TileConfig(256, 128, 32, 8, 8, 6, split_n=2, epilogue_stages=2, kernel="gluon_coop_tall", fast_division=True),
    # The H100's tall and cooperative-tall winners at BT >= 4096 with each round of tiles started together
    # (``wave_sync``, session 51; 600 k cycles, about two rounds at BT 16384: a wait that long ends only when
    # every program has arrived). Against each winner on an H100 (bits equal, results/2026-12-06/session51/
    # call4, call5): the LM head at BT 16384 AdamW int8 1.080x, bf16 1.048x; at BT 4096 bf16 1.044x, int8
    # 1.028x; 12288 x 4096 at BT 16384 bf16 1.071x, int8 1.081x; 4096 x 12288 at BT 16384 0.987-0.994x.
    # Session 52 (results/2026-12-06/session52/call2): five more H100 rows take them (1.008-1.035x); on the
    # four-stage tall and cooperative rows at BT 4096 the wait cost 5-7% (SGD-m, Lion), kept unsynced.
    TileConfig(256, 128, 32, 8, 8, 5, split_n=2, epilogue_stages=2, kernel="gluon_coop_tall", wave_sync=600_000),
    TileConfig(128, 128, 64, 8, 8, 5, split_n=2, epilogue_stages=1, kernel="gluon_tall", wave_sync=600_000),
    TileConfig(128, 128, 64, 8, 8, 4, split_n=2, epilogue_stages=2, kernel="gluon_tall", wave_sync=600_000),
    # Tall units with a buffer per pass (epilogue_stages 4, session 54): the second pass's weight and states arrive
    # during the unit's main loop instead of after the first pass's stores; beside 4 B per element (SGD-m and Lion's
    # bf16 state, int8 moments) the ring is six BK 32 stages. On an H100 (bits equal, results/2026-12-06/session54/
    # call3, call4): the LM head at BT 512 SGD-m 1.032x and 1.021x the tall row, Lion 1.014x, where the same ring with
    # one buffer per consumer reads 0.983x and 1.001x; at BT 1024 (SGD-m, Lion, four shapes) 0.85-0.93x and on
    # 12288 x 4096 and 4096 x 12288 at BT 512 0.94x, AdamW int8 on the tall rows 0.92-0.97x.
    TileConfig(128, 128, 32, 8, 8, 6, split_n=2, epilogue_stages=4, kernel="gluon_tall"),
)

# Under evaluation: timed by ``python -m forge_mcore.bench.kernel --sweep`` beside CONFIGS and
# checked by the GPU parity test, never used by the training-time tuner until a sweep shows
# them winning (then they move into CONFIGS). None at the moment.
# Measured and removed (docs/perf_log.md): a persistent grid with the tile loop flattened around
# the main loop (session 5: 10-55% slower in every swept cell); the non-persistent Gluon kernel
# (session 7: 0.74-0.83x at BT 512, its two-deep slab ring starves the main loop); 64x128
# capped at 168 registers for int8 states (session 7: -1.2% to +11.3%); pointer stores beside
# TMA loads (session 8: at best 1.01x); the persistent Gluon kernel with one consumer
# warpgroup (session 8: 0.81-0.87x at BT <= 1024) and with two but a 3- or 4-deep slab ring
# (slower than 5-deep in every cell); one tile buffer shared by the ping-pong consumers, which
# left room for a six- or seven-deep ring (session 10: 0.81-1.06x, the next tile's loads wait
# for the last one's stores); BLOCK_K 32 rings of twice the depth for the ping-pong schedule
# (session 10: 0.82-1.00x at BT <= 1024); a cooperative three-deep ring (slower than four); a
# three-deep tall ring (session 14: 0.68-0.99x the tuned configs for bf16 states, slower than
# four-deep everywhere); tall tiles filled by cp.async (session 23: 0.52-1.01x); six-deep ping-pong rings
# beside a buffer per consumer (4 B per element: session 26 call 4, 0.91-1.05x the winners, behind the
# tile ring's six- and seven-deep ones in 11 of 12 cells); tile rings asking L2 for each next unit's weight
# and state lines a turn before its fills (session 28 call 1: 0.90-0.99x the winners at BT 512/1024 on
# 1024 x 4096 and 4096², every arm); BLOCK_K 128 ping-pong rings of three or four stages (session 37 call 1, on an
# H100: 0.83-1.01x the winners at BT 512/1024 on 1024 x 4096 and 4096², bits equal); cooperative-tall tiles with a
# buffer per pass (session 54 call 1, an H100, AdamW int8 on the LM head: 1.000x the committed row at BT 16384,
# 0.985x at 4096; its four-stage ring costs what the second pass's earlier fill saves).
CANDIDATES: tuple[TileConfig, ...] = ()

# Under TRITON_INTERPRET=1 nothing is timed: one small tile keeps the CPU suite fast
# while still exercising several tiles, partial tiles and several K chunks.
INTERPRETER_CONFIG = TileConfig(32, 128, 16, 2, 1, 1, split_n=2)

# Leave room for the epilogue's layout conversions (block absmax reshapes): of the 227 KB a Hopper
# block may opt into, the slabs take at most 200.
SMEM_BUDGET = 200 * 1024
_HOPPER_SMEM_PER_BLOCK = 227 * 1024


def smem_budget(optin_bytes: int | None) -> int:
    """The slab budget on a device whose blocks may opt into ``optin_bytes`` of shared memory (an
    A100 163 KB, an L40 99 KB): Hopper's headroom kept, never more than ``SMEM_BUDGET``; None (not
    known) is Hopper's. Configs over it are pruned before the tuner compiles them."""
    if optin_bytes is None:
        return SMEM_BUDGET
    return min(SMEM_BUDGET, optin_bytes - (_HOPPER_SMEM_PER_BLOCK - SMEM_BUDGET))


def prune_configs(
    configs: tuple[TileConfig, ...], M: int, N: int, K: int, elem_bytes: int, smem_limit: int = SMEM_BUDGET
) -> list[TileConfig]:
    """Drop candidates that cannot fit or cannot pay off for this problem.

    * shared memory of the pipelined slabs over ``smem_limit``;
    * tiles much larger than the matrix (more than half of the tile masked);
    * K chunks longer than BT itself (all but one chunk would be padding).
    Never returns an empty list: the smallest fitting tile survives.
    """
    fits = [c for c in configs if c.smem_bytes(elem_bytes) <= smem_limit and c.block_n % CODEC_BLOCK == 0]
    if not fits:
        raise ValueError(f"no tile config fits {smem_limit} bytes of shared memory at {elem_bytes}-byte operands")
    k_cap = max(16, 1 << max(K - 1, 1).bit_length())
    kept = [
        c for c in fits
        if c.block_m <= max(64, 2 * M) and c.block_n <= max(64, 2 * N) and c.block_k <= k_cap
    ]
    if not kept:
        kept = [min(fits, key=lambda c: (c.block_m * c.block_n, c.block_k))]
    return kept
