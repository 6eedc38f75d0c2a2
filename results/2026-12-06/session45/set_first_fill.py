"""Session 45: this tree's winners.csv with first_fill_after N on one device's rows of the three-buffer ring
ping-pong configs at the given cells (what call 11 times on an H200 before any sweep there has chosen it).

    python3 results/2026-12-06/session45/set_first_fill.py "NVIDIA H200" 2 1024x4096:512 [4096x4096:512 ...]
"""

import dataclasses
import sys

from forge_mcore.kernels import winners


def main() -> None:
    device, after, cells = sys.argv[1], int(sys.argv[2]), {tuple(c.replace(":", "x").split("x")) for c in sys.argv[3:]}
    rows, changed = [], 0
    for name, arch, key, cfg, ms in winners.read():
        ring = cfg.kernel == "gluon_ws" and cfg.tile_ring == 3
        if name == device and key[0] == "step" and key[1:4] in cells and ring:
            cfg, changed = dataclasses.replace(cfg, first_fill_after=after), changed + 1
        rows.append((name, arch, key, cfg, ms))
    winners.write(rows)
    print(f"{changed} rows of {device} now first_fill_after {after}")


if __name__ == "__main__":
    main()
