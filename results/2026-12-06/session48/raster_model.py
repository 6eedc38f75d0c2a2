"""The prediction for next_lm16k.sh: slab bytes from DRAM per step at the LM head's BT 16384 by tile order, if the
132 programs moved through K in lockstep and L2 kept what the wave in flight shares but nothing across waves
(each wave: its distinct dY row blocks and X column blocks read once over K). Cooperative tall tiles, 256 x 128.

    python3 results/2026-12-06/session48/raster_model.py
"""

from __future__ import annotations

M, N, K, BLOCK_M, BLOCK_N, PROGRAMS = 151936, 4096, 16384, 256, 128, 132


def tile_ids(pid: int, group_m: int) -> tuple[int, int]:
    """The kernels' grouped order (``fused_wgrad._tile_ids``)."""
    num_m, num_n = -(-M // BLOCK_M), N // BLOCK_N
    group = pid // (group_m * num_n)
    first_m = group * group_m
    size_m = min(num_m - first_m, group_m)
    return first_m + (pid % (group_m * num_n)) % size_m, (pid % (group_m * num_n)) // size_m


def slab_gb(group_m: int) -> float:
    tiles = -(-M // BLOCK_M) * (N // BLOCK_N)
    total = 0
    for first in range(0, tiles, PROGRAMS):
        wave = [tile_ids(t, group_m) for t in range(first, min(first + PROGRAMS, tiles))]
        total += len({m for m, _ in wave}) * BLOCK_M * K * 2 + len({n for _, n in wave}) * BLOCK_N * K * 2
    return total / 1e9


if __name__ == "__main__":
    print(f"unique slab bytes: {(M + N) * K * 2 / 1e9:.1f} GB")
    for group_m in (1, 2, 4, 8, 16, 32):
        print(f"group_m {group_m:3d}: {slab_gb(group_m):6.1f} GB of slabs per step in lockstep")
