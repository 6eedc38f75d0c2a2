"""Session 46: the H100's own winners rows for the AdamW BT 1024 cells where call 6 timed a config's
``serial_fills`` twin faster than the config itself (the H200's row, which the H100 borrowed), bits equal.
Each row keeps the key of the borrowed row and takes the twin and its measured time.

    python3 results/2026-12-06/session46/h100_serial_rows.py results/2026-12-06/session46/call6/config_ab.csv
"""

import ast
import csv
import sys

from forge_mcore.kernels import winners
from forge_mcore.kernels.configs import CONFIGS, TileConfig

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
RULE_AT, STATE_AT = winners.KEY_FIELDS.index("rule"), winners.KEY_FIELDS.index("state_dtype")


def main() -> None:
    ab = list(csv.DictReader(open(sys.argv[1])))
    reference = {(r["cell"], r["arm"]): TileConfig(**ast.literal_eval(r["config"]))
                 for r in ab if r["reference"] == "True"}
    twins = {}
    for r in ab:
        twin = TileConfig(**ast.literal_eval(r["config"]))
        if r["reference"] == "False" and r["bits_equal_reference"] == "True" and float(r["speedup"]) > 1 and (
                twin in CONFIGS):
            shape, bt = r["cell"].split(":")
            rule, state = r["arm"].split("-")
            twins[(*shape.split("x"), bt, rule, state)] = (reference[(r["cell"], r["arm"])], twin, float(r["ms"]))
    rows = winners.read()
    own = {(key[1], key[2], key[3], key[RULE_AT], key[STATE_AT]) for name, _, key, _, _ in rows if name == H100}
    added = []
    for name, arch, key, cfg, _ in list(rows):
        cell = (key[1], key[2], key[3], key[RULE_AT], key[STATE_AT])
        if name == H200 and cell in twins and cell not in own and twins[cell][0] == cfg:
            rows.append((H100, arch, key, twins[cell][1], twins[cell][2]))
            added.append(cell)
    winners.write(rows)
    print(f"{len(added)} H100 rows added: {added}")


if __name__ == "__main__":
    main()
